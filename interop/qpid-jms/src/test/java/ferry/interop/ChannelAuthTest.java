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

import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.Test;

/**
 * Channel and connection authentication seen from Qpid JMS: a connection a CHLAUTH record
 * refuses, or whose password is wrong, fails with JMSSecurityException
 * (amqp:unauthorized-access), as MQ's 2035; the right password (SASL PLAIN) connects.
 *
 * interop/run.sh --ferry sets them up: AMQP_BLOCKED_URL is a channel whose ADDRESSMAP
 * record says USERSRC(NOACCESS); users INTEROP_USER and 'blockme' (password
 * INTEROP_PASSWORD) are in the user repository, and 'blockme' is in the BLOCKUSER list of
 * every channel. With a peer broker (no AMQP_BLOCKED_URL) the tests are skipped.
 */
class ChannelAuthTest {
    static final String BLOCKED_URL = System.getenv("AMQP_BLOCKED_URL");
    static final String USER = System.getenv("INTEROP_USER");
    static final String PASSWORD = System.getenv("INTEROP_PASSWORD");

    static void assumeSecurity() {
        assumeTrue(BLOCKED_URL != null && USER != null,
                "AMQP_BLOCKED_URL or INTEROP_USER unset: the broker is not set up for these tests");
    }

    static Connection connect(String url, String user, String password) throws Exception {
        JmsConnectionFactory f = new JmsConnectionFactory(url + "?failover.maxReconnectAttempts=0");
        Connection c = user == null ? f.createConnection() : f.createConnection(user, password);
        c.start();
        return c;
    }

    @Test
    void aChannelClosedByANoAccessRecordRefusesTheConnection() {
        assumeSecurity();
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = connect(BLOCKED_URL, null, null)) {
                // Not reached.
            }
        });
    }

    @Test
    void theRightPasswordConnectsAndAWrongOneIsRefused() throws Exception {
        assumeSecurity();
        try (Connection c = connect(Interop.URL, USER, PASSWORD)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue(Interop.PREFIX + "INTEROP.TLS");
            s.createProducer(q).send(s.createTextMessage("authenticated"));
            MessageConsumer consumer = s.createConsumer(q);
            TextMessage got = (TextMessage) consumer.receive(10_000);
            assertNotNull(got, "the message came back");
            assertEquals("authenticated", got.getText());
        }
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = connect(Interop.URL, USER, PASSWORD + "-wrong")) {
                // Not reached.
            }
        });
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = connect(Interop.URL, "nobody-" + USER, PASSWORD)) {
                // Not reached.
            }
        });
    }

    @Test
    void aBlockedUserIsRefusedEvenWithItsPassword() {
        assumeSecurity();
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = connect(Interop.URL, "blockme", PASSWORD)) {
                // Not reached.
            }
        });
    }
}
