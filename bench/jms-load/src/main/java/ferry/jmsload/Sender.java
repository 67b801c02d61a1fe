package ferry.jmsload;

import jakarta.jms.BytesMessage;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;

/** SR sender or PS publisher: sends to one queue or topic as fast as the broker takes it, or at --rate. */
final class Sender extends Application {
    /** Message property carrying the send time (System.nanoTime) for the receive latency. */
    static final String SENT_AT = "FerrySentAt";
    /** Message property naming the generator process that sent it (send times compare only within one). */
    static final String RUN = "FerryLoadRun";
    /** This process's run id. */
    static final long RUN_ID = new java.util.Random().nextLong();

    private final String address;
    private final boolean topic;
    private final byte[] payload;
    private MessageProducer producer;
    /** With --rate: when the next message is due (System.nanoTime). */
    private long nextAt;

    Sender(Session session, Step step, Options options, String address, boolean topic) {
        super(session, step, options);
        this.address = address;
        this.topic = topic;
        this.payload = body(options.size);
    }

    @Override
    void setUp() throws JMSException {
        Destination d = topic ? session.createTopic(options.topicPrefix + address) : session.createQueue(options.queuePrefix + address);
        producer = session.createProducer(d);
        producer.setDeliveryMode(options.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
    }

    @Override
    void once() throws JMSException {
        if (options.rate > 0) {
            long now = System.nanoTime();
            if (nextAt == 0) nextAt = now;
            if (now < nextAt) {
                java.util.concurrent.locks.LockSupport.parkNanos(Math.min(nextAt - now, 100_000_000L));
                return;
            }
            nextAt += (long) (1e9 / options.rate);
        }
        BytesMessage m = session.createBytesMessage();
        m.writeBytes(payload);
        m.setLongProperty(RUN, RUN_ID);
        m.setLongProperty(SENT_AT, System.nanoTime());
        producer.send(m);
        commitIfTransacted();
        if (step.measuring) step.sent.increment();
    }
}
