package ferry.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import jakarta.jms.Connection;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/**
 * Object authorities (SET AUTHREC) seen from Qpid JMS: a user without CONNECT on the queue
 * manager cannot connect, and a user may open a queue only for what its authority records
 * grant; each refusal is MQ's 2035, which the client gets as amqp:unauthorized-access and
 * raises as JMSSecurityException.
 *
 * interop/run.sh --ferry sets them up: users INTEROP_USER, INTEROP_LIMITED_USER ('limited')
 * and INTEROP_NOCONNECT_USER ('noconnect'), password INTEROP_PASSWORD, are in the user
 * repository and none is an administrator; INTEROP_USER may connect and use every queue,
 * 'limited' may connect and only browse, get and inquire on INTEROP.AUTH.Q, 'noconnect' has
 * no authority at all. With a peer broker (these unset) the tests are skipped.
 */
class ObjectAuthorityTest {
    static final String USER = System.getenv("INTEROP_USER");
    static final String PASSWORD = System.getenv("INTEROP_PASSWORD");
    static final String LIMITED = System.getenv("INTEROP_LIMITED_USER");
    static final String NOCONNECT = System.getenv("INTEROP_NOCONNECT_USER");
    /** 'limited' may browse, get and inquire on this queue, and nothing else. */
    static final String AUTH_QUEUE = "INTEROP.AUTH.Q";
    /** A queue that exists and 'limited' has no authority on. */
    static final String OTHER_QUEUE = "INTEROP.SENDRECV";

    static void assumeAuthorities() {
        assumeTrue(USER != null && LIMITED != null && NOCONNECT != null,
                "INTEROP_USER, INTEROP_LIMITED_USER or INTEROP_NOCONNECT_USER unset: "
                        + "the broker is not set up for these tests");
    }

    @Test
    void aUserWithoutConnectAuthorityCannotConnect() {
        assumeAuthorities();
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = ChannelAuthTest.connect(Interop.URL, NOCONNECT, PASSWORD)) {
                // Not reached.
            }
        });
    }

    @Test
    void aUserWithGetAuthorityConsumesButCannotProduce() throws Exception {
        assumeAuthorities();
        try (Connection c = ChannelAuthTest.connect(Interop.URL, USER, PASSWORD)) {
            Interop.drain(c, AUTH_QUEUE);
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            s.createProducer(Interop.queue(s, AUTH_QUEUE)).send(s.createTextMessage("for limited"));
        }
        try (Connection c = ChannelAuthTest.connect(Interop.URL, LIMITED, PASSWORD)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = Interop.queue(s, AUTH_QUEUE);
            MessageConsumer consumer = s.createConsumer(q);
            TextMessage got = (TextMessage) consumer.receive(10_000);
            assertNotNull(got, "'limited' got the message");
            assertEquals("for limited", got.getText());
            assertThrows(JMSSecurityException.class, () -> s.createProducer(q),
                    "'limited' has no PUT authority on " + AUTH_QUEUE);
        }
    }

    @Test
    void aUserCannotConsumeFromAQueueItHasNoAuthorityOn() throws Exception {
        assumeAuthorities();
        try (Connection c = ChannelAuthTest.connect(Interop.URL, LIMITED, PASSWORD)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertThrows(JMSSecurityException.class,
                    () -> s.createConsumer(Interop.queue(s, OTHER_QUEUE)),
                    "'limited' has no GET authority on " + OTHER_QUEUE);
        }
    }
}
