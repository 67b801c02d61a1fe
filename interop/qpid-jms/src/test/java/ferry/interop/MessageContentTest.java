package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/** Message bodies (Text/Bytes/Map, large multi-frame), priorities, TTL expiry, id types. */
class MessageContentTest {

    @Test
    void text_bytes_and_map_messages_round_trip_exactly_and_keep_their_type() throws Exception {
        drain("INTEROP.TYPES");
        byte[] allBytes = new byte[256];
        for (int i = 0; i < 256; i++) allBytes[i] = (byte) i;
        String unicode = "héllo wörld ✓ 漢字 \uD83D\uDE00";
        String longText = "x".repeat(100_000);
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.TYPES");
            MessageProducer p = s.createProducer(q);
            p.send(s.createTextMessage(unicode));
            p.send(s.createTextMessage(""));
            p.send(s.createTextMessage(longText));
            BytesMessage bm = s.createBytesMessage();
            bm.writeBytes(allBytes);
            p.send(bm);
            p.send(s.createBytesMessage()); // empty
            MapMessage mm = s.createMapMessage();
            mm.setString("s", unicode);
            mm.setInt("i", -42);
            mm.setLong("l", Long.MAX_VALUE);
            mm.setShort("sh", (short) -7);
            mm.setByte("b", (byte) 0x7f);
            mm.setDouble("d", Math.PI);
            mm.setFloat("f", 1.5f);
            mm.setBoolean("t", true);
            mm.setBytes("bytes", allBytes);
            mm.setChar("c", 'Z');
            p.send(mm);

            MessageConsumer mc = s.createConsumer(q);
            Message m = mc.receive(5000);
            assertInstanceOf(TextMessage.class, m);
            assertEquals(unicode, ((TextMessage) m).getText());
            m = mc.receive(5000);
            assertInstanceOf(TextMessage.class, m);
            assertEquals("", ((TextMessage) m).getText());
            m = mc.receive(5000);
            assertEquals(longText, ((TextMessage) m).getText());

            m = mc.receive(5000);
            assertInstanceOf(BytesMessage.class, m);
            BytesMessage rb = (BytesMessage) m;
            assertEquals(256, rb.getBodyLength());
            byte[] got = new byte[256];
            rb.readBytes(got);
            assertArrayEquals(allBytes, got);
            m = mc.receive(5000);
            assertInstanceOf(BytesMessage.class, m);
            assertEquals(0, ((BytesMessage) m).getBodyLength());

            m = mc.receive(5000);
            assertInstanceOf(MapMessage.class, m);
            MapMessage rm = (MapMessage) m;
            assertEquals(unicode, rm.getString("s"));
            assertEquals(-42, rm.getInt("i"));
            assertEquals(Long.MAX_VALUE, rm.getLong("l"));
            assertEquals((short) -7, rm.getShort("sh"));
            assertEquals((byte) 0x7f, rm.getByte("b"));
            assertEquals(Math.PI, rm.getDouble("d"));
            assertEquals(1.5f, rm.getFloat("f"));
            assertTrue(rm.getBoolean("t"));
            assertArrayEquals(allBytes, rm.getBytes("bytes"));
            assertEquals('Z', rm.getChar("c"));
            List<String> names = new ArrayList<>();
            rm.getMapNames().asIterator().forEachRemaining(n -> names.add((String) n));
            assertEquals(10, names.size(), "map entries " + names);
            assertNull(mc.receive(300));
        }
    }

    @Test
    void large_messages_of_2_and_3_MB_arrive_intact() throws Exception {
        drain("INTEROP.LARGE");
        Random rnd = new Random(5672);
        byte[] big = new byte[3 * 1024 * 1024 + 17];
        rnd.nextBytes(big);
        StringBuilder sb = new StringBuilder();
        while (sb.length() < 2 * 1024 * 1024 + 5) sb.append("large text ✓ ").append(sb.length()).append('\n');
        String bigText = sb.toString();
        // 64 KiB frames: the 3 MB message takes ~50 transfer frames each way
        try (Connection c = connect("amqp.maxFrameSize=65536")) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.LARGE");
            MessageProducer p = s.createProducer(q);
            BytesMessage bm = s.createBytesMessage();
            bm.writeBytes(big);
            p.send(bm);
            p.send(s.createTextMessage(bigText));
            MessageConsumer mc = s.createConsumer(q);
            BytesMessage rb = (BytesMessage) mc.receive(30_000);
            assertNotNull(rb, "3 MB bytes message not received");
            assertEquals(big.length, rb.getBodyLength());
            byte[] got = new byte[big.length];
            assertEquals(big.length, rb.readBytes(got));
            assertEquals(sha(big), sha(got), "3 MB body differs");
            TextMessage rt = (TextMessage) mc.receive(30_000);
            assertNotNull(rt, "2 MB text message not received");
            assertEquals(bigText.length(), rt.getText().length());
            assertEquals(bigText, rt.getText());
        }
        assertEquals(0, drain("INTEROP.LARGE"));
    }

    static String sha(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void higher_priority_messages_are_received_first_and_fifo_within_a_priority() throws Exception {
        drain("INTEROP.PRIORITY");
        int[] order = {0, 4, 9, 1, 7, 4, 9, 0, 7, 5, 3, 9};
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.PRIORITY");
            MessageProducer p = s.createProducer(q);
            for (int i = 0; i < order.length; i++) {
                p.setPriority(order[i]);
                p.send(s.createTextMessage("p" + order[i] + "-" + i));
            }
            List<String> expected = new ArrayList<>();
            for (int prio = 9; prio >= 0; prio--) {
                for (int i = 0; i < order.length; i++) if (order[i] == prio) expected.add("p" + prio + "-" + i);
            }
            MessageConsumer mc = s.createConsumer(q);
            List<String> got = new ArrayList<>();
            for (Message m : receiveAll(mc, 700)) {
                got.add(((TextMessage) m).getText());
                assertEquals(Integer.parseInt(((TextMessage) m).getText().substring(1, 2)), m.getJMSPriority());
            }
            assertEquals(expected, got);
        }
    }

    @Test
    void an_expired_message_is_never_delivered_and_JMSExpiration_is_kept() throws Exception {
        drain("INTEROP.TTL");
        long before = System.currentTimeMillis();
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.TTL");
            MessageProducer p = s.createProducer(q);
            p.setTimeToLive(1000);
            p.send(s.createTextMessage("short-lived"));
            p.setTimeToLive(0);
            p.send(s.createTextMessage("forever"));
            p.setTimeToLive(60_000);
            p.send(s.createTextMessage("one minute"));
            Thread.sleep(2000);
            MessageConsumer mc = s.createConsumer(q);
            List<Message> got = receiveAll(mc, 700);
            List<String> texts = new ArrayList<>();
            for (Message m : got) texts.add(((TextMessage) m).getText());
            assertEquals(List.of("forever", "one minute"), texts, "the 1 s TTL message must have expired");
            assertEquals(0, got.get(0).getJMSExpiration());
            long exp = got.get(1).getJMSExpiration();
            assertTrue(exp >= before + 60_000 && exp <= System.currentTimeMillis() + 60_000,
                    "JMSExpiration " + exp + " not send time + 60 s");
        }
    }

    /** Qpid JMS encodes "ID:AMQP_UUID:", "ID:AMQP_ULONG:", "ID:AMQP_BINARY:" correlation ids as typed AMQP ids. */
    @Test
    void correlation_and_message_ids_of_every_amqp_type_round_trip_exactly() throws Exception {
        drain("INTEROP.IDS");
        UUID uuid = UUID.randomUUID();
        List<String> corr = List.of(
                "plain-string-id",
                "ID:AMQP_UUID:" + uuid,
                "ID:AMQP_ULONG:18446744073709551615",
                "ID:AMQP_BINARY:00FF10AB",
                "ID:AMQP_NO_PREFIX:no-prefix", // sent as the plain string "no-prefix"
                "ID:app-style");
        List<String> expectedCorr = new ArrayList<>(corr);
        expectedCorr.set(4, "no-prefix");
        byte[] corrBytes = {0, 1, 2, (byte) 0xfe, (byte) 0xff};
        List<String> sentIds = new ArrayList<>();
        try (Connection c = connect("jms.messageIDPolicy.messageIDType=UUID")) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.IDS");
            MessageProducer p = s.createProducer(q);
            for (String id : corr) {
                TextMessage m = s.createTextMessage(id);
                m.setJMSCorrelationID(id);
                p.send(m);
                sentIds.add(m.getJMSMessageID());
            }
            TextMessage m = s.createTextMessage("bytes");
            m.setJMSCorrelationIDAsBytes(corrBytes);
            p.send(m);
            sentIds.add(m.getJMSMessageID());

            MessageConsumer mc = s.createConsumer(q);
            for (int i = 0; i < corr.size(); i++) {
                Message r = mc.receive(5000);
                assertNotNull(r);
                assertEquals(expectedCorr.get(i), r.getJMSCorrelationID(), "correlation id " + corr.get(i));
                assertEquals(sentIds.get(i), r.getJMSMessageID(), "uuid message id");
                assertTrue(r.getJMSMessageID().startsWith("ID:AMQP_UUID:"), r.getJMSMessageID());
            }
            Message r = mc.receive(5000);
            assertArrayEquals(corrBytes, r.getJMSCorrelationIDAsBytes(), "binary correlation id " + Arrays.toString(corrBytes));
            assertEquals(sentIds.get(corr.size()), r.getJMSMessageID());
            mc.close();
            // a selector matches a typed (uuid) correlation id by its JMS string form
            TextMessage sel = s.createTextMessage("select me");
            sel.setJMSCorrelationID("ID:AMQP_UUID:" + uuid);
            p.send(sel);
            try (MessageConsumer byCorr = s.createConsumer(q, "JMSCorrelationID = 'ID:AMQP_UUID:" + uuid + "'")) {
                Message got = byCorr.receive(5000);
                assertNotNull(got, "selector on a uuid correlation id");
                assertEquals("select me", ((TextMessage) got).getText());
            }
        }
        assertEquals(0, drain("INTEROP.IDS"));
    }
}
