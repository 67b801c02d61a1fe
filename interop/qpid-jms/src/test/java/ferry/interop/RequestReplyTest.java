package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.jms.Connection;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/** Request/reply: shared reply queue with a JMSCorrelationID selector; temporary reply queues. */
class RequestReplyTest {

    /** Serves requests from a queue: reply body = "re:" + request body, CorrelID = request MsgId. */
    static final class Responder implements AutoCloseable {
        final Connection conn;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger served = new AtomicInteger();
        final Thread thread;
        volatile Throwable failure;

        Responder(String requestQueue) throws JMSException {
            conn = connect();
            Session s = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer mc = s.createConsumer(queue(s, requestQueue));
            MessageProducer replies = s.createProducer(null);
            thread = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        Message m = mc.receive(200);
                        if (m == null) continue;
                        TextMessage r = s.createTextMessage("re:" + ((TextMessage) m).getText());
                        r.setJMSCorrelationID(m.getJMSMessageID());
                        replies.send(m.getJMSReplyTo(), r);
                        served.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure = t;
                }
            }, "responder");
            thread.start();
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            thread.join(10_000);
            conn.close();
            if (failure != null) throw new AssertionError("responder failed", failure);
        }
    }

    @Test
    void four_requesters_with_correlation_id_selectors_on_a_shared_reply_queue_each_get_exactly_their_replies() throws Exception {
        drain("INTEROP.REQUEST");
        drain("INTEROP.REPLY");
        final int requesters = 4, perRequester = 25;
        ConcurrentHashMap<String, String> delivered = new ConcurrentHashMap<>(); // reply msg id -> requester
        try (Responder responder = new Responder("INTEROP.REQUEST")) {
            ExecutorService pool = Executors.newFixedThreadPool(requesters);
            List<Future<Integer>> results = new ArrayList<>();
            for (int r = 0; r < requesters; r++) {
                final int who = r;
                results.add(pool.submit(() -> {
                    try (Connection c = connect()) {
                        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
                        Queue replyQ = queue(s, "INTEROP.REPLY");
                        MessageProducer p = s.createProducer(queue(s, "INTEROP.REQUEST"));
                        int ok = 0;
                        for (int i = 0; i < perRequester; i++) {
                            String body = "req-" + who + "-" + i;
                            TextMessage req = s.createTextMessage(body);
                            req.setJMSReplyTo(replyQ);
                            p.send(req);
                            String id = req.getJMSMessageID();
                            try (MessageConsumer mc = s.createConsumer(replyQ, "JMSCorrelationID = '" + id + "'")) {
                                Message reply = mc.receive(10_000);
                                assertNotNull(reply, "no reply for " + body);
                                assertEquals(id, reply.getJMSCorrelationID());
                                assertEquals("re:" + body, ((TextMessage) reply).getText(), "got another requester's reply");
                                assertNull(delivered.put(reply.getJMSMessageID(), body), "reply delivered twice");
                                ok++;
                            }
                        }
                        return ok;
                    }
                }));
            }
            pool.shutdown();
            assertTrue(pool.awaitTermination(80, TimeUnit.SECONDS), "requesters did not finish");
            int total = 0;
            for (Future<Integer> f : results) total += f.get();
            assertEquals(requesters * perRequester, total);
            assertEquals(requesters * perRequester, responder.served.get());
        }
        assertEquals(0, drain("INTEROP.REPLY"), "unclaimed replies left on the reply queue");
        assertEquals(0, drain("INTEROP.REQUEST"), "unserved requests left");
    }

    @Test
    void replies_come_back_on_a_temporary_queue_which_is_private_and_gone_after_delete() throws Exception {
        drain("INTEROP.TEMPREQ");
        String tempName;
        try (Responder responder = new Responder("INTEROP.TEMPREQ"); Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            TemporaryQueue temp = s.createTemporaryQueue();
            tempName = temp.getQueueName();
            assertNotNull(tempName);
            assertFalse(tempName.isEmpty(), "broker returned no address for the dynamic node");
            MessageProducer p = s.createProducer(queue(s, "INTEROP.TEMPREQ"));
            MessageConsumer mc = s.createConsumer(temp);
            for (int i = 0; i < 10; i++) {
                TextMessage req = s.createTextMessage("t" + i);
                req.setJMSReplyTo(temp);
                p.send(req);
                Message reply = mc.receive(10_000);
                assertNotNull(reply, "no reply on temporary queue for t" + i);
                assertEquals("re:t" + i, ((TextMessage) reply).getText());
                assertEquals(req.getJMSMessageID(), reply.getJMSCorrelationID());
            }
            // another connection may not consume from it (JMS: only the creating connection)
            try (Connection other = connect()) {
                Session os = other.createSession(false, Session.AUTO_ACKNOWLEDGE);
                assertThrows(JMSException.class, () -> os.createConsumer(temp));
            }
            mc.close();
            temp.delete();
            assertEquals(10, responder.served.get());
        }
        assertEquals(0, drain("INTEROP.TEMPREQ"));
    }

    @Test
    void a_temporary_queue_is_gone_when_its_connection_closes() throws Exception {
        String tempName;
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            TemporaryQueue temp = s.createTemporaryQueue();
            tempName = temp.getQueueName();
            s.createProducer(temp).send(s.createTextMessage("left behind"));
        }
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue byName = s.createQueue(tempName); // same address, as a plain queue
            assertThrows(InvalidDestinationException.class, () -> s.createProducer(byName).send(s.createTextMessage("x")),
                    "temporary queue " + tempName + " still exists after its connection closed");
        }
    }
}
