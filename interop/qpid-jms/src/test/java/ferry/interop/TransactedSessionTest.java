package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/**
 * Transacted sessions (AMQP local transactions through the coordinator): commit makes
 * sends visible and receives final; rollback drops the sends and redelivers the receives
 * with JMSRedelivered and JMSXDeliveryCount raised.
 */
class TransactedSessionTest {

    @Test
    void a_commit_makes_the_sends_visible_and_the_receives_final() throws Exception {
        drain("INTEROP.TX.IN");
        drain("INTEROP.TX.OUT");
        try (Connection c = connect()) {
            c.start();
            Session plain = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            plain.createProducer(queue(plain, "INTEROP.TX.IN")).send(plain.createTextMessage("request"));

            Session tx = c.createSession(true, Session.SESSION_TRANSACTED);
            MessageConsumer in = tx.createConsumer(queue(tx, "INTEROP.TX.IN"));
            MessageProducer out = tx.createProducer(queue(tx, "INTEROP.TX.OUT"));
            out.setDeliveryMode(DeliveryMode.PERSISTENT);
            Message m = in.receive(10_000);
            assertNotNull(m, "the request arrives in the transacted session");
            out.send(tx.createTextMessage("reply"));

            MessageConsumer watcher = plain.createConsumer(queue(plain, "INTEROP.TX.OUT"));
            assertNull(watcher.receive(500), "a send is invisible before the commit");
            tx.commit();
            Message reply = watcher.receive(10_000);
            assertNotNull(reply, "the committed send arrives");
            assertEquals("reply", ((TextMessage) reply).getText());
            in.close();
        }
        assertEquals(0, drain("INTEROP.TX.IN"), "the committed receive is final");
    }

    @Test
    void a_rollback_drops_the_sends_and_redelivers_the_receives() throws Exception {
        drain("INTEROP.TX.IN");
        drain("INTEROP.TX.OUT");
        try (Connection c = connect()) {
            c.start();
            Session plain = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            plain.createProducer(queue(plain, "INTEROP.TX.IN")).send(plain.createTextMessage("request"));

            Session tx = c.createSession(true, Session.SESSION_TRANSACTED);
            MessageConsumer in = tx.createConsumer(queue(tx, "INTEROP.TX.IN"));
            MessageProducer out = tx.createProducer(queue(tx, "INTEROP.TX.OUT"));
            Message first = in.receive(10_000);
            assertNotNull(first);
            assertFalse(first.getJMSRedelivered());
            out.send(tx.createTextMessage("dropped"));
            tx.rollback();

            Message again = in.receive(10_000);
            assertNotNull(again, "the rolled-back receive is redelivered");
            assertEquals("request", ((TextMessage) again).getText());
            assertTrue(again.getJMSRedelivered(), "JMSRedelivered after a rollback");
            assertEquals(2, again.getIntProperty("JMSXDeliveryCount"), "JMSXDeliveryCount after a rollback");
            tx.commit();
            in.close();
        }
        assertEquals(0, drain("INTEROP.TX.OUT"), "the rolled-back send was dropped");
        assertEquals(0, drain("INTEROP.TX.IN"), "the receive committed after the redelivery is final");
    }
}
