package ferry.jmsload;

import jakarta.jms.BytesMessage;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;

/**
 * RR requester: sends a request to REQUEST.1..N in turn and waits for its reply, either on the
 * shared REPLY queue selected by JMSCorrelationID or on its own reply queue.
 */
final class Requester extends Application {
    private final int index;
    private final byte[] payload;
    private MessageProducer producer;
    private Queue[] requests;
    private Queue replyQueue;
    private MessageConsumer ownReplies;
    private int next;

    Requester(Session session, Step step, Options options, int index) {
        super(session, step, options);
        this.index = index;
        this.payload = body(options.size);
        this.next = index % options.queues;
    }

    @Override
    void setUp() throws JMSException {
        requests = new Queue[options.queues];
        for (int i = 0; i < options.queues; i++) {
            requests[i] = session.createQueue(options.queuePrefix + "REQUEST." + (i + 1));
        }
        producer = session.createProducer(null);
        producer.setDeliveryMode(options.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
        if (options.replyQueues == Options.ReplyQueues.PER_REQUESTER) {
            replyQueue = session.createQueue(options.queuePrefix + "REPLY." + (index + 1));
            ownReplies = session.createConsumer(replyQueue);
        } else {
            replyQueue = session.createQueue(options.queuePrefix + "REPLY");
        }
    }

    @Override
    void once() throws JMSException {
        BytesMessage request = session.createBytesMessage();
        request.writeBytes(payload);
        request.setJMSReplyTo(replyQueue);
        Queue target = requests[next];
        next = (next + 1) % requests.length;
        long t0 = System.nanoTime();
        producer.send(target, request);
        commitIfTransacted();
        String id = request.getJMSMessageID();
        Message reply = receiveReply(id, t0);
        if (reply == null) {
            // no reply within the time-out: an error even if the window closed meanwhile
            step.errors.increment();
            return;
        }
        acknowledgeIfClient(reply);
        commitIfTransacted();
        long t1 = System.nanoTime();
        if (step.measuring) {
            step.ops.increment();
            step.sent.increment();
            Step.record(latencies, t1 - t0);
        }
    }

    /** The reply whose JMSCorrelationID is the request's JMSMessageID, or null on time-out. */
    private Message receiveReply(String id, long sentAt) throws JMSException {
        if (ownReplies == null) {
            String selector = "JMSCorrelationID = '" + id.replace("'", "''") + "'";
            try (MessageConsumer c = session.createConsumer(replyQueue, selector)) {
                return c.receive(options.replyTimeoutMs);
            }
        }
        long deadline = sentAt + options.replyTimeoutMs * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) return null;
            Message m = ownReplies.receive(left);
            if (m == null) return null;
            if (id.equals(m.getJMSCorrelationID())) return m;
            // a late reply to an earlier, timed-out request: settle it and keep waiting
            acknowledgeIfClient(m);
            commitIfTransacted();
        }
    }
}
