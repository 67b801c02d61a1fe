package ferry.jmsload;

import jakarta.jms.BytesMessage;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.util.HashMap;
import java.util.Map;

/**
 * RR responder: consumes one REQUEST queue and sends each request's body back to its
 * JMSReplyTo with the request's JMSMessageID as JMSCorrelationID.
 */
final class Responder extends Application {
    private final String queue;
    private MessageConsumer consumer;
    /** One producer per reply queue (a producer without a destination may need a link per send). */
    private final Map<Destination, MessageProducer> producers = new HashMap<>();

    Responder(Session session, Step step, Options options, String queue) {
        super(session, step, options);
        this.queue = queue;
    }

    @Override
    void setUp() throws JMSException {
        consumer = session.createConsumer(session.createQueue(options.queuePrefix + queue));
    }

    @Override
    boolean stopsLast() { return true; }

    @Override
    void once() throws JMSException {
        Message m = consumer.receive(100);
        if (m == null) return;
        acknowledgeIfClient(m);
        commitIfTransacted();
        Destination to = m.getJMSReplyTo();
        if (to == null) {
            step.errors.increment();
            return;
        }
        BytesMessage reply = session.createBytesMessage();
        if (m instanceof BytesMessage b) {
            byte[] data = new byte[(int) b.getBodyLength()];
            b.readBytes(data);
            reply.writeBytes(data);
        }
        reply.setJMSCorrelationID(m.getJMSMessageID());
        MessageProducer p = producers.get(to);
        if (p == null) {
            p = session.createProducer(to);
            p.setDeliveryMode(options.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
            producers.put(to, p);
        }
        p.send(reply);
        commitIfTransacted();
    }
}
