package ferry.jmsload;

import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * What the applications of one point share: whether to keep running, whether the measured
 * window is open, and what they count (operations, errors, latencies) inside it.
 */
final class Step {
    /** Longest latency recorded, in microseconds (longer ones are clamped to it). */
    static final long MAX_LATENCY_US = 60_000_000L;

    volatile boolean running = true;
    volatile boolean measuring;
    final LongAdder ops = new LongAdder();
    final LongAdder sent = new LongAdder();
    final LongAdder errors = new LongAdder();
    private final Histogram latencies = new Histogram(MAX_LATENCY_US, 3);

    /** A fresh histogram for one application thread (merged with {@link #merge} at the end). */
    static Histogram newHistogram() { return new Histogram(MAX_LATENCY_US, 3); }

    /** Adds one application's latencies to the step's. */
    synchronized void merge(Histogram h) { latencies.add(h); }

    /** The merged latencies of every application. */
    synchronized Histogram latencies() { return latencies.copy(); }

    /** Records one latency in nanoseconds into an application's histogram. */
    static void record(Histogram h, long nanos) {
        h.recordValue(Math.min(MAX_LATENCY_US, Math.max(0, nanos / 1000)));
    }
}
