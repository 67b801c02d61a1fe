package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

import org.junit.jupiter.api.Test;

/**
 * Publish/subscribe: topics, non-durable, durable and shared subscriptions, selectors, noLocal,
 * temporary topics, anonymous producers. Each test uses topics of its own (a fresh suffix), so
 * publications of one test never reach another's subscriptions.
 */
class TopicTest {

    /** A topic name no other test or run uses. */
    private static String fresh(String base) {
        return "interop/" + base + "/" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static Connection connectAs(String clientId) throws Exception {
        Connection c = factory("").createConnection();
        c.setClientID(clientId);
        c.start();
        return c;
    }

    /** Restarts the broker with INTEROP_RESTART_CMD and waits until it takes connections. */
    private static void restartBroker() throws Exception {
        System.out.println("restarting broker: " + RESTART_CMD);
        sh(RESTART_CMD);
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            try (Connection c = connect()) {
                return;
            } catch (jakarta.jms.JMSException e) {
                if (System.currentTimeMillis() > deadline) throw e;
                Thread.sleep(500);
            }
        }
    }

    private static String text(Message m) throws Exception {
        assertNotNull(m, "no message");
        return ((TextMessage) m).getText();
    }

    @Test
    void every_subscriber_gets_each_publication_once_and_only_those_made_after_it_subscribed() throws Exception {
        String name = fresh("fanout");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            MessageProducer p = s.createProducer(t);
            p.send(s.createTextMessage("before anyone subscribed"));
            MessageConsumer a = s.createConsumer(t);
            MessageConsumer b = s.createConsumer(t);
            for (int i = 0; i < 20; i++) {
                p.send(s.createTextMessage("m" + i), i % 2 == 0 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT, 4, 0);
            }
            for (MessageConsumer mc : new MessageConsumer[] {a, b}) {
                for (int i = 0; i < 20; i++) {
                    Message m = mc.receive(5000);
                    assertEquals("m" + i, text(m));
                    assertEquals(i % 2 == 0 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT, m.getJMSDeliveryMode());
                }
                assertNull(mc.receive(200), "one copy each, nothing from before the subscription");
            }
        }
    }

    @Test
    void a_selector_on_a_subscription_picks_the_publications_it_gets() throws Exception {
        String name = fresh("selector");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            MessageConsumer lse = s.createConsumer(t, "venue = 'LSE'");
            MessageProducer p = s.createProducer(t);
            for (String venue : new String[] {"NYSE", "LSE", "XETRA", "LSE"}) {
                TextMessage m = s.createTextMessage(venue);
                m.setStringProperty("venue", venue);
                p.send(m);
            }
            assertEquals("LSE", text(lse.receive(5000)));
            assertEquals("LSE", text(lse.receive(5000)));
            assertNull(lse.receive(200));
        }
    }

    @Test
    void a_durable_subscription_keeps_publications_while_its_consumer_is_closed_until_unsubscribed() throws Exception {
        String name = fresh("durable");
        String clientId = "interop-durable-" + UUID.randomUUID();
        try (Connection c = connectAs(clientId)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            MessageConsumer sub = s.createDurableSubscriber(t, "dsub");
            sub.close();
            MessageProducer p = s.createProducer(t);
            for (int i = 0; i < 3; i++) {
                p.send(s.createTextMessage("while closed " + i), DeliveryMode.PERSISTENT, 4, 0);
            }
            sub = s.createDurableSubscriber(t, "dsub");
            for (int i = 0; i < 3; i++) {
                assertEquals("while closed " + i, text(sub.receive(5000)));
            }
            sub.close();
            s.unsubscribe("dsub");
            p.send(s.createTextMessage("after unsubscribe"));
            sub = s.createDurableSubscriber(t, "dsub");
            assertNull(sub.receive(300), "a new subscription starts empty");
            sub.close();
            s.unsubscribe("dsub");
            assertThrows(InvalidDestinationException.class, () -> s.unsubscribe("dsub"));
        }
    }

    @Test
    void a_durable_subscription_and_its_persistent_publications_survive_a_restart() throws Exception {
        if (RESTART_CMD == null || RESTART_CMD.isBlank()) {
            skipBecause("INTEROP_RESTART_CMD is not set (a command that restarts the broker keeping its data)");
        }
        String name = fresh("restart");
        String clientId = "interop-restart-" + UUID.randomUUID();
        try (Connection c = connectAs(clientId)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            s.createDurableSubscriber(t, "rsub").close();
            s.createProducer(t).send(s.createTextMessage("kept"), DeliveryMode.PERSISTENT, 4, 0);
        }
        restartBroker();
        try (Connection c = connectAs(clientId)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer sub = s.createDurableSubscriber(s.createTopic(name), "rsub");
            assertEquals("kept", text(sub.receive(10000)));
            sub.close();
            s.unsubscribe("rsub");
        }
    }

    @Test
    void a_shared_subscription_gives_each_publication_to_one_of_its_consumers() throws Exception {
        String name = fresh("shared");
        try (Connection c1 = connect(); Connection c2 = connect()) {
            Session s1 = c1.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = c2.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s1.createTopic(name);
            MessageConsumer a = s1.createSharedConsumer(t, "workers");
            MessageConsumer b = s2.createSharedConsumer(s2.createTopic(name), "workers");
            MessageProducer p = s1.createProducer(t);
            for (int i = 0; i < 20; i++) {
                p.send(s1.createTextMessage("job " + i));
            }
            Set<String> got = new HashSet<>();
            int fromA = 0;
            int fromB = 0;
            for (int i = 0; i < 40 && got.size() < 20; i++) {
                Message m = a.receive(100);
                if (m != null) {
                    assertTrue(got.add(text(m)), "delivered twice: " + text(m));
                    fromA++;
                }
                m = b.receive(100);
                if (m != null) {
                    assertTrue(got.add(text(m)), "delivered twice: " + text(m));
                    fromB++;
                }
            }
            assertEquals(20, got.size());
            assertTrue(fromA > 0 && fromB > 0, "both consumers share the work: " + fromA + "/" + fromB);
        }
    }

    @Test
    void a_shared_durable_subscription_outlives_its_consumers() throws Exception {
        String name = fresh("shared-durable");
        String clientId = "interop-shared-" + UUID.randomUUID();
        try (Connection c = connectAs(clientId)) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            s.createSharedDurableConsumer(t, "sd").close();
            s.createProducer(t).send(s.createTextMessage("waiting"), DeliveryMode.PERSISTENT, 4, 0);
            MessageConsumer mc = s.createSharedDurableConsumer(t, "sd");
            assertEquals("waiting", text(mc.receive(5000)));
            mc.close();
            s.unsubscribe("sd");
        }
    }

    @Test
    void no_local_drops_the_connections_own_publications() throws Exception {
        String name = fresh("nolocal");
        try (Connection mine = connect(); Connection other = connect()) {
            Session s = mine.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            MessageConsumer mc = s.createConsumer(t, null, true);
            s.createProducer(t).send(s.createTextMessage("mine"));
            Session o = other.createSession(false, Session.AUTO_ACKNOWLEDGE);
            o.createProducer(o.createTopic(name)).send(o.createTextMessage("theirs"));
            assertEquals("theirs", text(mc.receive(5000)));
            assertNull(mc.receive(200));
        }
    }

    @Test
    void publications_cross_between_jms_and_native_applications() throws Exception {
        if (NATIVE_PUB_CMD == null || NATIVE_SUB_CMD == null) {
            skipBecause("INTEROP_NATIVE_PUB_CMD / INTEROP_NATIVE_SUB_CMD are not set (the broker's native pub/sub client)");
        }
        String name = fresh("native");
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic(name);
            // Native publisher, JMS subscriber.
            MessageConsumer mc = s.createConsumer(t);
            sh(NATIVE_PUB_CMD, name, "from a native publisher");
            assertEquals("from a native publisher", text(mc.receive(5000)));
            // JMS publisher, native subscriber (started first, in the background).
            Process sub = new ProcessBuilder("bash", "-c", NATIVE_SUB_CMD + " \"$@\"", "sub", name)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            sub.getOutputStream().close();
            java.io.BufferedReader out = new java.io.BufferedReader(
                new java.io.InputStreamReader(sub.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
            assertEquals("subscribed", out.readLine(), "the native subscriber subscribed");
            s.createProducer(t).send(s.createTextMessage("from a JMS publisher"));
            assertEquals("from a JMS publisher", out.readLine());
            assertTrue(sub.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "the native subscriber ended");
        }
    }

    @Test
    void a_temporary_topic_and_an_anonymous_producer_publish() throws Exception {
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            TemporaryTopic tmp = s.createTemporaryTopic();
            MessageConsumer mc = s.createConsumer(tmp);
            s.createProducer(tmp).send(s.createTextMessage("to the temporary topic"));
            assertEquals("to the temporary topic", text(mc.receive(5000)));
            Topic t = s.createTopic(fresh("anonymous"));
            MessageConsumer mc2 = s.createConsumer(t);
            MessageProducer anonymous = s.createProducer(null);
            anonymous.send(t, s.createTextMessage("through the anonymous producer"));
            assertEquals("through the anonymous producer", text(mc2.receive(5000)));
            mc.close();
            tmp.delete();
        }
    }
}
