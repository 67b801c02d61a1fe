package ferry.jmsload;

import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;

/** SR receiver or PS subscriber: consumes one queue or topic, counting what it gets. */
final class Receiver extends Application {
    private final String address;
    private final boolean topic;
    private MessageConsumer consumer;

    Receiver(Session session, Step step, Options options, String address, boolean topic) {
        super(session, step, options);
        this.address = address;
        this.topic = topic;
    }

    @Override
    void setUp() throws JMSException {
        Destination d = topic ? session.createTopic(options.topicPrefix + address) : session.createQueue(options.queuePrefix + address);
        consumer = session.createConsumer(d);
    }

    @Override
    boolean stopsLast() { return true; }

    @Override
    void once() throws JMSException {
        Message m = consumer.receive(100);
        if (m == null) return;
        acknowledgeIfClient(m);
        commitIfTransacted();
        if (step.measuring) {
            step.ops.increment();
            // messages left by an earlier run count, but their send times are another JVM's
            if (m.propertyExists(Sender.RUN) && m.getLongProperty(Sender.RUN) == Sender.RUN_ID) {
                Step.record(latencies, System.nanoTime() - m.getLongProperty(Sender.SENT_AT));
            }
        }
    }
}
