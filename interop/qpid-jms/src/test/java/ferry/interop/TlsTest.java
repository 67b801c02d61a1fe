package ferry.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.Test;

/**
 * AMQPS: Qpid JMS over TLS (amqps://) to an AMQP channel with SSLCIPH, with a trust store
 * holding the CA of the queue manager's certificate, and with a client certificate where
 * the channel has SSLCAUTH(REQUIRED). interop/run.sh --ferry makes the certificates with
 * OpenSSL and sets the environment; without it (a peer broker) the tests are skipped.
 *
 * Environment: AMQPS_URL (SSLCAUTH(OPTIONAL) channel), AMQPS_AUTH_URL (SSLCAUTH(REQUIRED)
 * channel), INTEROP_TRUST_STORE (PKCS#12 with the CA), INTEROP_KEY_STORE (PKCS#12 with the
 * client's certificate and key), INTEROP_STORE_PASSWORD.
 */
class TlsTest {
    static final String AMQPS_URL = System.getenv("AMQPS_URL");
    static final String AMQPS_AUTH_URL = System.getenv("AMQPS_AUTH_URL");
    static final String TRUST = System.getenv("INTEROP_TRUST_STORE");
    static final String KEYS = System.getenv("INTEROP_KEY_STORE");
    static final String PASSWORD = System.getenv("INTEROP_STORE_PASSWORD");

    static void assumeTls() {
        assumeTrue(AMQPS_URL != null && TRUST != null,
                "AMQPS_URL and INTEROP_TRUST_STORE unset: the broker is not set up for TLS");
    }

    static String trustOptions() {
        return "transport.trustStoreLocation=" + TRUST
                + "&transport.trustStorePassword=" + PASSWORD
                + "&transport.trustStoreType=PKCS12";
    }

    static String keyOptions() {
        return "&transport.keyStoreLocation=" + KEYS
                + "&transport.keyStorePassword=" + PASSWORD
                + "&transport.keyStoreType=PKCS12";
    }

    static Connection connect(String url, String options) throws JMSException {
        JmsConnectionFactory f = new JmsConnectionFactory(url + "?" + options);
        Connection c = f.createConnection();
        c.start();
        return c;
    }

    static void roundTrip(Connection c, String body) throws JMSException {
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = s.createQueue(Interop.PREFIX + "INTEROP.TLS");
        MessageProducer p = s.createProducer(q);
        p.send(s.createTextMessage(body));
        MessageConsumer consumer = s.createConsumer(q);
        TextMessage got = (TextMessage) consumer.receive(10_000);
        assertNotNull(got, "the message came back over TLS");
        assertEquals(body, got.getText());
    }

    @Test
    void amqpsWithATrustStoreCarriesMessages() throws Exception {
        assumeTls();
        try (Connection c = connect(AMQPS_URL, trustOptions())) {
            roundTrip(c, "over amqps");
        }
    }

    @Test
    void aClientCertificateOpensTheChannelThatRequiresOne() throws Exception {
        assumeTls();
        assumeTrue(AMQPS_AUTH_URL != null && KEYS != null, "no SSLCAUTH(REQUIRED) channel set up");
        try (Connection c = connect(AMQPS_AUTH_URL, trustOptions() + keyOptions())) {
            roundTrip(c, "with a client certificate");
        }
        // Without one, the TLS handshake is refused and the connection fails.
        JMSException e = assertThrows(JMSException.class, () -> {
            try (Connection c = connect(AMQPS_AUTH_URL,
                    trustOptions() + "&amqp.saslLayer=true&failover.maxReconnectAttempts=0")) {
                roundTrip(c, "never");
            }
        });
        assertNotNull(e.getMessage());
    }

    @Test
    void anUntrustedQueueManagerCertificateIsRefusedByTheClient() throws Exception {
        assumeTls();
        // The JDK's default trust store does not hold the test CA.
        assertThrows(JMSException.class, () -> {
            try (Connection c = connect(AMQPS_URL, "transport.verifyHost=false")) {
                roundTrip(c, "never");
            }
        });
    }
}
