package ferry.jmsload;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Session;
import org.HdrHistogram.Histogram;

/**
 * One application of a workload: a JMS session on a (possibly shared) connection, set up on
 * the main thread, then one thread running {@link #once} until the step ends.
 */
abstract class Application implements Runnable {
    protected final Session session;
    protected final Step step;
    protected final Options options;
    protected final Histogram latencies = Step.newHistogram();

    Application(Session session, Step step, Options options) {
        this.session = session;
        this.step = step;
        this.options = options;
    }

    /** Creates producers and consumers; a failure here fails the point. */
    abstract void setUp() throws JMSException;

    /** One operation (a round trip, a send, a receive); counts what it did into {@link #step}. */
    abstract void once() throws JMSException;

    /** Whether this application keeps running until told to stop after the others. */
    boolean stopsLast() { return false; }

    /** Whether this application should still run. */
    volatile boolean running = true;

    @Override
    public void run() {
        while (running) {
            try {
                once();
            } catch (JMSException | RuntimeException e) {
                if (!running || !step.running && !stopsLast()) break;
                step.errors.increment();
                if (step.errors.sum() <= 5) System.err.println("jms-load: " + getClass().getSimpleName() + ": " + e);
                try { Thread.sleep(10); } catch (InterruptedException ie) { break; }
            }
        }
        step.merge(latencies);
    }

    /** Commits a transacted session (after each send and each receive, as the reports do). */
    protected void commitIfTransacted() throws JMSException {
        if (options.transacted) session.commit();
    }

    /** Acknowledges a message received on a CLIENT_ACKNOWLEDGE session. */
    protected void acknowledgeIfClient(Message m) throws JMSException {
        if (!options.transacted && options.ack == Options.Ack.CLIENT) m.acknowledge();
    }

    /** A message body of the configured size. */
    protected static byte[] body(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) b[i] = (byte) ('a' + i % 26);
        return b;
    }
}
