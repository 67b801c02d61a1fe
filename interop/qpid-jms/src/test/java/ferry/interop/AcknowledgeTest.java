package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/** NO_ACKNOWLEDGE (pre-settled), CLIENT_ACKNOWLEDGE with recover, redelivery, JMS_AMQP_ACK_TYPE outcomes. */
class AcknowledgeTest {

    static void send(String queue, int n, String prefix) throws Exception {
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer p = s.createProducer(queue(s, queue));
            p.setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = 0; i < n; i++) p.send(s.createTextMessage(prefix + i));
        }
    }

    static String text(Message m) throws Exception {
        return ((TextMessage) m).getText();
    }

    @Test
    void no_acknowledge_consumer_gets_every_message_once_and_they_are_gone_without_any_ack() throws Exception {
        drain("INTEROP.NOACK");
        send("INTEROP.NOACK", 20, "n");
        try (Connection c = connect()) {
            Session s = c.createSession(false, 100); // Qpid JMS NO_ACKNOWLEDGE
            MessageConsumer mc = s.createConsumer(queue(s, "INTEROP.NOACK"));
            for (int i = 0; i < 20; i++) {
                Message m = mc.receive(5000);
                assertNotNull(m, "n" + i + " missing");
                assertEquals("n" + i, text(m));
            }
            assertNull(mc.receive(300));
        }
        assertEquals(0, drain("INTEROP.NOACK"), "pre-settled (NO_ACKNOWLEDGE) deliveries came back");
    }

    @Test
    void client_acknowledge_recover_redelivers_unacknowledged_messages_marked_redelivered() throws Exception {
        drain("INTEROP.CLIENTACK");
        send("INTEROP.CLIENTACK", 5, "c");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer mc = s.createConsumer(queue(s, "INTEROP.CLIENTACK"));
            for (int i = 0; i < 3; i++) {
                Message m = mc.receive(5000);
                assertEquals("c" + i, text(m));
                assertFalse(m.getJMSRedelivered());
                assertEquals(1, m.getIntProperty("JMSXDeliveryCount"));
            }
            s.recover();
            List<String> after = new ArrayList<>();
            Message last = null;
            for (int i = 0; i < 5; i++) {
                Message m = mc.receive(5000);
                assertNotNull(m, "message " + i + " after recover");
                after.add(text(m));
                if (i < 3) {
                    assertTrue(m.getJMSRedelivered(), text(m) + " after recover should be redelivered");
                    assertEquals(2, m.getIntProperty("JMSXDeliveryCount"));
                } else {
                    assertFalse(m.getJMSRedelivered(), text(m) + " was never delivered before");
                }
                last = m;
            }
            assertEquals(List.of("c0", "c1", "c2", "c3", "c4"), after);
            last.acknowledge(); // acknowledges every message delivered in the session
            assertNull(mc.receive(300));
        }
        assertEquals(0, drain("INTEROP.CLIENTACK"), "acknowledged messages came back");
    }

    @Test
    void client_acknowledge_messages_not_acknowledged_before_close_are_redelivered_by_the_broker() throws Exception {
        drain("INTEROP.CLIENTACK");
        send("INTEROP.CLIENTACK", 4, "r");
        try (Connection c = connect("jms.prefetchPolicy.all=1")) {
            Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer mc = s.createConsumer(queue(s, "INTEROP.CLIENTACK"));
            Message m0 = mc.receive(5000);
            assertEquals("r0", text(m0));
            m0.acknowledge();
            Message m1 = mc.receive(5000);
            assertEquals("r1", text(m1));
            // m1 never acknowledged: connection closes
        }
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer mc = s.createConsumer(queue(s, "INTEROP.CLIENTACK"));
            List<Message> got = receiveAll(mc, 700);
            List<String> texts = new ArrayList<>();
            for (Message m : got) texts.add(text(m));
            assertEquals(List.of("r1", "r2", "r3"), texts, "r0 was acknowledged, the rest must come back in order");
            Message r1 = got.get(0);
            assertTrue(r1.getJMSRedelivered(), "r1 was delivered to the application before: JMSRedelivered");
            assertTrue(r1.getIntProperty("JMSXDeliveryCount") >= 2, "JMSXDeliveryCount of r1");
            got.get(got.size() - 1).acknowledge();
        }
        assertEquals(0, drain("INTEROP.CLIENTACK"));
    }

    /** JMS_AMQP_ACK_TYPE selects the AMQP outcome: 1 accepted, 2 rejected, 3 released, 4 modified(failed). */
    @Test
    void released_returns_unchanged_modified_failed_counts_a_delivery_rejected_removes() throws Exception {
        drain("INTEROP.ACKTYPE");
        send("INTEROP.ACKTYPE", 3, "a");
        final int individual = 101; // Qpid INDIVIDUAL_ACKNOWLEDGE
        // prefetch 0: each receive() pulls one message, so a returned message is the next one got
        try (Connection c = connect("jms.prefetchPolicy.all=0")) {
            Session s = c.createSession(false, individual);
            Queue q = queue(s, "INTEROP.ACKTYPE");
            MessageConsumer mc = s.createConsumer(q);

            Message m = mc.receive(5000);
            assertEquals("a0", text(m));
            m.setIntProperty("JMS_AMQP_ACK_TYPE", 3); // RELEASED
            m.acknowledge();
            m = mc.receive(5000);
            assertEquals("a0", text(m), "released message comes back first");
            assertFalse(m.getJMSRedelivered(), "released must not count as a delivery attempt");
            assertEquals(1, m.getIntProperty("JMSXDeliveryCount"));

            m.setIntProperty("JMS_AMQP_ACK_TYPE", 4); // MODIFIED_FAILED
            m.acknowledge();
            m = mc.receive(5000);
            assertEquals("a0", text(m), "modified message comes back first");
            assertTrue(m.getJMSRedelivered(), "modified(delivery-failed) counts a delivery attempt");
            assertEquals(2, m.getIntProperty("JMSXDeliveryCount"));

            m.setIntProperty("JMS_AMQP_ACK_TYPE", 2); // REJECTED: poison message, removed
            m.acknowledge();
            m = mc.receive(5000);
            assertEquals("a1", text(m), "rejected message must not be redelivered");
            m.acknowledge(); // accepted
            m = mc.receive(5000);
            assertEquals("a2", text(m));
            m.acknowledge();
            assertNull(mc.receive(300));
        }
        assertEquals(0, drain("INTEROP.ACKTYPE"));
    }
}
