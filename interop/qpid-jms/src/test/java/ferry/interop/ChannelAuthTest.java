package ferry.interop;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import jakarta.jms.Connection;
import jakarta.jms.JMSSecurityException;

import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.Test;

/**
 * Channel authentication records (SET CHLAUTH) seen from Qpid JMS: a connection a record
 * refuses fails with JMSSecurityException (amqp:unauthorized-access), as MQ's 2035.
 *
 * interop/run.sh --ferry sets them up: AMQP_BLOCKED_URL is a channel whose ADDRESSMAP
 * record says USERSRC(NOACCESS), and the SASL user 'blockme' is in the BLOCKUSER list of
 * every channel. With a peer broker (no AMQP_BLOCKED_URL) the tests are skipped.
 */
class ChannelAuthTest {
    static final String BLOCKED_URL = System.getenv("AMQP_BLOCKED_URL");

    static void assumeChlauth() {
        assumeTrue(BLOCKED_URL != null, "AMQP_BLOCKED_URL unset: the broker has no CHLAUTH records");
    }

    static Connection connect(String url, String user) throws Exception {
        JmsConnectionFactory f = new JmsConnectionFactory(url + "?failover.maxReconnectAttempts=0");
        Connection c = user == null ? f.createConnection() : f.createConnection(user, "secret");
        c.start();
        return c;
    }

    @Test
    void aChannelClosedByANoAccessRecordRefusesTheConnection() {
        assumeChlauth();
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = connect(BLOCKED_URL, null)) {
                // Not reached.
            }
        });
    }

    @Test
    void aBlockedUserIsRefusedWhereOthersAreLetIn() throws Exception {
        assumeChlauth();
        try (Connection c = connect(Interop.URL, "someone")) {
            c.createSession(false, jakarta.jms.Session.AUTO_ACKNOWLEDGE).close();
        }
        assertThrows(JMSSecurityException.class, () -> {
            try (Connection c = connect(Interop.URL, "blockme")) {
                // Not reached.
            }
        });
    }
}
