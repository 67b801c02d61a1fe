package ferry.jmsload;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * The JMS load generator's entry point: runs one workload at each client count of
 * --clients and prints one RESULT line per point (see bench/README.md for the fields).
 * Exits non-zero when a point could not run (e.g. the broker refused transactions or topics).
 */
public final class JmsLoad {
    private final Options options;
    private final JmsConnectionFactory factory;

    private JmsLoad(Options options) {
        this.options = options;
        this.factory = new JmsConnectionFactory(options.connectionUri());
    }

    public static void main(String[] args) {
        if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println(Options.USAGE);
            System.exit(0);
            return;
        }
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("jms-load: " + e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        JmsLoad load = new JmsLoad(options);
        boolean allRan = true;
        for (int n : options.clients) allRan &= load.point(n);
        System.out.flush();
        System.exit(allRan ? 0 : 1);
    }

    /** The applications of one point, split into those that consume and those that produce. */
    private record Shape(List<Application> consumers, List<Application> producers, List<Connection> connections) {}

    /** Runs one point with n clients; false when it could not be set up. */
    private boolean point(int n) {
        Step step = new Step();
        Shape shape = new Shape(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        try {
            build(n, step, shape);
        } catch (JMSException | RuntimeException e) {
            System.out.println("FAILED bench=jms-" + options.bench.name().toLowerCase(Locale.ROOT)
                + " broker=" + options.broker + " clients=" + n + " reason=\"" + reason(e) + "\"");
            closeAll(shape.connections());
            return false;
        }
        List<Thread> consumerThreads = start(shape.consumers(), "consumer");
        List<Thread> producerThreads = start(shape.producers(), "producer");
        sleep(options.warmupSecs);
        step.measuring = true;
        ProcStat.Reading r0 = ProcStat.read(options.brokerPid);
        long t0 = System.nanoTime();
        sleep(options.secs);
        step.measuring = false;
        long t1 = System.nanoTime();
        ProcStat.Reading r1 = ProcStat.read(options.brokerPid);
        // producers first (requesters finish their round trip), then the consumers drain
        step.running = false;
        stop(shape.producers(), producerThreads);
        stop(shape.consumers(), consumerThreads);
        closeAll(shape.connections());
        report(n, step, (t1 - t0) / 1e9, r0, r1);
        if (step.ops.sum() == 0) {
            System.out.println("FAILED bench=jms-" + options.bench.name().toLowerCase(Locale.ROOT)
                + " broker=" + options.broker + " clients=" + n + " reason=\"no operation completed in the"
                + " measured window (the broker blocked the producers, or no reply came back)\"");
            return false;
        }
        return true;
    }

    /** Connects and sets up every application of the point, consumers first. */
    private void build(int n, Step step, Shape shape) throws JMSException {
        int q = options.queues;
        switch (options.bench) {
            case RR -> {
                int responders = Math.max(n, q);
                List<Session> cs = sessions(responders, step, shape.connections());
                for (int j = 0; j < responders; j++) {
                    shape.consumers().add(new Responder(cs.get(j), step, options, "REQUEST." + (j % q + 1)));
                }
                List<Session> ps = sessions(n, step, shape.connections());
                for (int i = 0; i < n; i++) shape.producers().add(new Requester(ps.get(i), step, options, i));
            }
            case SR -> {
                int receivers = n * options.receiversPerQueue;
                List<Session> cs = sessions(receivers, step, shape.connections());
                for (int j = 0; j < receivers; j++) {
                    shape.consumers().add(new Receiver(cs.get(j), step, options, "SR." + (j % n + 1), false));
                }
                List<Session> ps = sessions(n, step, shape.connections());
                for (int i = 0; i < n; i++) shape.producers().add(new Sender(ps.get(i), step, options, "SR." + (i + 1), false));
            }
            case PS -> {
                // n subscribers; each topic's publications fan out to every subscriber of it.
                List<Session> cs = sessions(n, step, shape.connections());
                for (int j = 0; j < n; j++) {
                    shape.consumers().add(new Receiver(cs.get(j), step, options, "PS." + (j % q + 1), true));
                }
                int publishers = options.publishers > 0 ? options.publishers : n;
                List<Session> ps = sessions(publishers, step, shape.connections());
                for (int i = 0; i < publishers; i++) {
                    shape.producers().add(new Sender(ps.get(i), step, options, "PS." + (i % q + 1), true));
                }
            }
        }
        for (Application a : shape.consumers()) a.setUp();
        for (Application a : shape.producers()) a.setUp();
    }

    /** count sessions, options.share per JMS connection, each connection started. */
    private List<Session> sessions(int count, Step step, List<Connection> connections) throws JMSException {
        List<Session> out = new ArrayList<>();
        Connection c = null;
        for (int i = 0; i < count; i++) {
            if (i % options.share == 0) {
                c = options.user == null ? factory.createConnection() : factory.createConnection(options.user, options.password);
                connections.add(c);
                c.setExceptionListener(e -> {
                    if (step.running) step.errors.increment();
                });
                c.start();
            }
            Session s = options.transacted
                ? c.createSession(true, Session.SESSION_TRANSACTED)
                : c.createSession(false, options.ack.sessionMode);
            out.add(s);
        }
        return out;
    }

    /** Why a point could not be set up, in the user's words where the cause is known. */
    private String reason(Exception e) {
        String detail = String.valueOf(e.getMessage()).replace('"', '\'');
        if (options.transacted) return "transacted sessions not supported by the broker: " + detail;
        if (options.bench == Options.Bench.PS) return "publish/subscribe (topics) not supported by the broker: " + detail;
        return detail;
    }

    private static List<Thread> start(List<Application> apps, String role) {
        List<Thread> threads = new ArrayList<>();
        int i = 0;
        for (Application a : apps) {
            Thread t = new Thread(a, "jms-load-" + role + "-" + i++);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        return threads;
    }

    private void stop(List<Application> apps, List<Thread> threads) {
        for (Application a : apps) a.running = false;
        long deadline = System.nanoTime() + (options.replyTimeoutMs + 5000) * 1_000_000L;
        for (Thread t : threads) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            try {
                if (left > 0) t.join(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void closeAll(List<Connection> connections) {
        for (Connection c : connections) {
            try {
                c.close();
            } catch (JMSException | RuntimeException e) {
                // closing at the end of a point: nothing left to measure
            }
        }
    }

    private void report(int n, Step step, double secs, ProcStat.Reading r0, ProcStat.Reading r1) {
        long ops = step.ops.sum();
        double rate = ops / secs;
        String cpu = "NA";
        if (r0.brokerTicks() >= 0 && r1.brokerTicks() >= 0 && ops > 0) {
            double us = (r1.brokerTicks() - r0.brokerTicks()) * 1e6 / ProcStat.TICKS_PER_SEC / ops;
            cpu = String.format(Locale.ROOT, "%.1f", us);
        }
        String steal = "NA";
        long total = r1.cpuTotalTicks() - r0.cpuTotalTicks();
        if (r0.cpuTotalTicks() >= 0 && r1.cpuTotalTicks() >= 0 && total > 0) {
            steal = String.format(Locale.ROOT, "%.1f", 100.0 * (r1.stealTicks() - r0.stealTicks()) / total);
        }
        Histogram h = step.latencies();
        String p50 = h.getTotalCount() == 0 ? "NA" : Long.toString(h.getValueAtPercentile(50));
        String p99 = h.getTotalCount() == 0 ? "NA" : Long.toString(h.getValueAtPercentile(99));
        System.out.println(String.format(Locale.ROOT,
            "RESULT bench=jms-%s broker=%s clients=%d size=%d persistent=%d ack=%s transacted=%d share=%d"
                + " rate=%.0f broker_cpu_us_per_op=%s steal_pct=%s p50_us=%s p99_us=%s errors=%d"
                + " ops=%d sent=%d secs=%.2f",
            options.bench.name().toLowerCase(Locale.ROOT), options.broker, n, options.size,
            options.persistent ? 1 : 0, options.ack.label(), options.transacted ? 1 : 0, options.share,
            rate, cpu, steal, p50, p99, step.errors.sum(), ops, step.sent.sum(), secs));
    }

    private static void sleep(double secs) {
        try {
            Thread.sleep((long) (secs * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
