package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/** Persistence across a restart, the native client round trip, idle timeouts. */
class BrokerLifecycleTest {

    @Test
    void persistent_messages_survive_a_broker_restart_including_delivered_but_unacknowledged_ones() throws Exception {
        if (RESTART_CMD == null || RESTART_CMD.isBlank()) {
            skipBecause("INTEROP_RESTART_CMD is not set (a command that restarts the broker keeping its data)");
        }
        drain("INTEROP.PERSIST");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer p = s.createProducer(queue(s, "INTEROP.PERSIST"));
            p.setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = 0; i < 10; i++) {
                TextMessage m = s.createTextMessage("durable " + i);
                m.setIntProperty("n", i);
                p.send(m); // persistent send returns when the broker has stored it
            }
        }
        // one message delivered but not acknowledged when the broker goes down
        Connection holder = connect("jms.prefetchPolicy.all=1");
        Session hs = holder.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        Message first = hs.createConsumer(queue(hs, "INTEROP.PERSIST")).receive(5000);
        assertEquals("durable 0", ((TextMessage) first).getText());
        holder.setExceptionListener(e -> { });

        System.out.println("restarting broker: " + RESTART_CMD);
        sh(RESTART_CMD);
        try {
            holder.close();
        } catch (JMSException ignored) {
            // the connection died with the broker
        }

        Connection c = null;
        long deadline = System.currentTimeMillis() + 60_000;
        while (c == null) {
            try {
                c = connect();
            } catch (JMSException e) {
                if (System.currentTimeMillis() > deadline) throw e;
                Thread.sleep(500);
            }
        }
        try {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer mc = s.createConsumer(queue(s, "INTEROP.PERSIST"));
            List<String> got = new ArrayList<>();
            for (Message m : receiveAll(mc, 1000)) got.add(((TextMessage) m).getText());
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) expected.add("durable " + i);
            assertEquals(expected, got, "persistent messages after restart");
        } finally {
            c.close();
        }
    }

    @Test
    void a_message_sent_with_jms_is_got_by_the_native_client_and_one_put_natively_is_received_with_jms() throws Exception {
        if (NATIVE_PUT_CMD == null || NATIVE_PUT_CMD.isBlank() || NATIVE_GET_CMD == null || NATIVE_GET_CMD.isBlank()) {
            skipBecause("INTEROP_NATIVE_PUT_CMD / INTEROP_NATIVE_GET_CMD are not set (the broker's native put/get commands)");
        }
        drain("INTEROP.NATIVE");
        String q = PREFIX + "INTEROP.NATIVE";
        String toNative = "from JMS ✓ " + UUID.randomUUID();
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer p = s.createProducer(queue(s, "INTEROP.NATIVE"));
            p.setDeliveryMode(DeliveryMode.PERSISTENT);
            p.send(s.createTextMessage(toNative));
        }
        assertEquals(toNative, sh(NATIVE_GET_CMD, q).strip(), "native get of a JMS TextMessage");

        String fromNative = "from native ✓ " + UUID.randomUUID();
        sh(NATIVE_PUT_CMD, q, fromNative);
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Message m = s.createConsumer(queue(s, "INTEROP.NATIVE")).receive(10_000);
            assertNotNull(m, "natively put message not received over AMQP");
            assertInstanceOf(TextMessage.class, m, "a native text message should arrive as a TextMessage");
            assertEquals(fromNative, ((TextMessage) m).getText());
        }
        assertEquals(0, drain("INTEROP.NATIVE"));
    }

    @Test
    void an_idle_connection_with_a_2s_idle_timeout_stays_open_through_6s_of_silence() throws Exception {
        drain("INTEROP.IDLE");
        AtomicReference<JMSException> failure = new AtomicReference<>();
        try (Connection c = connect("amqp.idleTimeout=2000")) {
            c.setExceptionListener(failure::set);
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.IDLE");
            MessageProducer p = s.createProducer(q);
            MessageConsumer mc = s.createConsumer(q);
            Thread.sleep(6000);
            assertNull(failure.get(), "connection failed while idle: the broker must send heartbeats");
            p.send(s.createTextMessage("still alive"));
            Message m = mc.receive(5000);
            assertNotNull(m, "no message after the idle period");
            assertEquals("still alive", ((TextMessage) m).getText());
        }
        assertNull(failure.get());
    }
}
