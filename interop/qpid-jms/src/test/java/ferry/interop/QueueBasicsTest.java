package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.ResourceAllocationException;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/** Point-to-point basics: send/receive, browsing, unknown queue, full queue. */
class QueueBasicsTest {

    @Test
    void messages_sent_to_a_queue_are_received_once_in_order_with_headers_and_properties() throws Exception {
        drain("INTEROP.SENDRECV");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.SENDRECV");
            MessageProducer p = s.createProducer(q);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                TextMessage m = s.createTextMessage("message " + i);
                m.setStringProperty("str", "s" + i);
                m.setIntProperty("idx", i);
                m.setLongProperty("big", 1L << 40 | i);
                m.setBooleanProperty("even", i % 2 == 0);
                m.setDoubleProperty("half", i / 2.0);
                m.setJMSType("order");
                p.send(m, i % 2 == 0 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT, 4, 0);
                ids.add(m.getJMSMessageID());
            }
            MessageConsumer mc = s.createConsumer(q);
            for (int i = 0; i < 50; i++) {
                Message m = mc.receive(5000);
                assertNotNull(m, "message " + i + " not received");
                assertEquals("message " + i, ((TextMessage) m).getText());
                assertEquals(ids.get(i), m.getJMSMessageID());
                assertEquals("s" + i, m.getStringProperty("str"));
                assertEquals(i, m.getIntProperty("idx"));
                assertEquals(1L << 40 | i, m.getLongProperty("big"));
                assertEquals(i % 2 == 0, m.getBooleanProperty("even"));
                assertEquals(i / 2.0, m.getDoubleProperty("half"));
                assertEquals("order", m.getJMSType());
                assertEquals(i % 2 == 0 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT, m.getJMSDeliveryMode());
                assertFalse(m.getJMSRedelivered());
                assertTrue(m.getJMSDestination().toString().endsWith("INTEROP.SENDRECV"), "JMSDestination " + m.getJMSDestination());
            }
            assertNull(mc.receive(500), "more messages than were sent");
        }
        assertEquals(0, drain("INTEROP.SENDRECV"), "auto-acknowledged messages came back");
    }

    @Test
    void a_browser_sees_all_messages_in_order_without_removing_them() throws Exception {
        drain("INTEROP.BROWSE");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.BROWSE");
            MessageProducer p = s.createProducer(q);
            for (int i = 0; i < 10; i++) {
                TextMessage m = s.createTextMessage("b" + i);
                m.setIntProperty("n", i);
                p.send(m);
            }
            long start = System.nanoTime();
            for (int round = 0; round < 2; round++) {
                try (QueueBrowser b = s.createBrowser(q)) {
                    List<String> seen = new ArrayList<>();
                    var e = b.getEnumeration();
                    while (e.hasMoreElements()) seen.add(((TextMessage) e.nextElement()).getText());
                    assertEquals(List.of("b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"), seen, "browse round " + round);
                }
            }
            try (QueueBrowser b = s.createBrowser(q, "n >= 7")) {
                List<String> seen = new ArrayList<>();
                var e = b.getEnumeration();
                while (e.hasMoreElements()) seen.add(((TextMessage) e.nextElement()).getText());
                assertEquals(List.of("b7", "b8", "b9"), seen, "browse with selector");
            }
            // a browser ends its enumeration by draining credit: a broker that does not answer the
            // drain (flow drain=true) makes every browse hang for amqp.drainTimeout
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < 8000, "3 browses of 10 messages took " + millis + " ms: drain not answered promptly?");
            MessageConsumer mc = s.createConsumer(q);
            for (int i = 0; i < 10; i++) {
                Message m = mc.receive(5000);
                assertNotNull(m, "browsed message b" + i + " was removed");
                assertEquals("b" + i, ((TextMessage) m).getText());
                assertFalse(m.getJMSRedelivered(), "browsing counted as a delivery");
            }
            assertNull(mc.receive(300));
        }
    }

    @Test
    void an_unknown_queue_is_an_InvalidDestinationException_for_producers_and_consumers() throws Exception {
        String name = "INTEROP.NO.SUCH.QUEUE." + System.nanoTime();
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, name);
            assertThrows(InvalidDestinationException.class, () -> s.createProducer(q).send(s.createTextMessage("x")),
                    "producer on unknown queue (amqp:not-found)");
            assertThrows(InvalidDestinationException.class, () -> s.createConsumer(q).receive(1000),
                    "consumer on unknown queue (amqp:not-found)");
            // the connection and session still work afterwards
            try (MessageProducer p = s.createProducer(queue(s, "INTEROP.SENDRECV"))) {
                p.send(s.createTextMessage("after not-found"));
            }
        }
        assertEquals(1, drain("INTEROP.SENDRECV"));
    }

    @Test
    void a_send_to_a_full_queue_fails_with_ResourceAllocationException_and_succeeds_again_after_a_get() throws Exception {
        drain("INTEROP.FULL");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.FULL");
            MessageProducer p = s.createProducer(q);
            p.setDeliveryMode(DeliveryMode.PERSISTENT); // synchronous send: the outcome is reported by send()
            for (int i = 0; i < 5; i++) p.send(s.createTextMessage("fill " + i));
            JMSException e = assertThrows(JMSException.class, () -> p.send(s.createTextMessage("one too many")),
                    "6th message on a queue with max depth 5");
            assertInstanceOf(ResourceAllocationException.class, e,
                    "amqp:resource-limit-exceeded should map to ResourceAllocationException, got " + e);
            MessageConsumer mc = s.createConsumer(q);
            Message first = mc.receive(5000);
            assertEquals("fill 0", ((TextMessage) first).getText());
            mc.close();
            p.send(s.createTextMessage("fits again"));
        }
        assertEquals(5, drain("INTEROP.FULL"), "queue should hold fill 1-4 + fits again");
    }
}
