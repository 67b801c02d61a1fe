package ferry.jmsload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The command line of the generator: which workload, against which broker, at which points. */
final class Options {
    /** The workloads of the reports. */
    enum Bench { RR, SR, PS }

    /** How requesters get their replies. */
    enum ReplyQueues { SHARED, PER_REQUESTER }

    /** The JMS acknowledge modes the generator can use for non-transacted sessions. */
    enum Ack {
        AUTO(jakarta.jms.Session.AUTO_ACKNOWLEDGE),
        CLIENT(jakarta.jms.Session.CLIENT_ACKNOWLEDGE),
        DUPS_OK(jakarta.jms.Session.DUPS_OK_ACKNOWLEDGE),
        /** Qpid JMS's JmsSession.NO_ACKNOWLEDGE: deliveries pre-settled by the broker. */
        NONE(100);

        final int sessionMode;

        Ack(int sessionMode) { this.sessionMode = sessionMode; }

        String label() { return name().toLowerCase(Locale.ROOT); }
    }

    Bench bench;
    String url = "amqp://localhost:5672";
    /**
     * Qpid JMS URI options. jms.receiveLocalOnly: a timed receive waits on the prefetched
     * messages only, as a blocking receive or a MessageListener does; without it every
     * receive that times out (the loops here use 100 ms so that they can stop) drains the
     * link, which a real responder never does and RabbitMQ 3.10's AMQP 1.0 plugin fails on.
     */
    String urlOptions = "jms.connectTimeout=10000&jms.requestTimeout=10000&jms.closeTimeout=5000"
        + "&jms.receiveLocalOnly=true";
    String user;
    String password;
    String broker = "unknown";
    List<Integer> clients = List.of(1);
    int size = 2048;
    boolean persistent;
    Ack ack = Ack.AUTO;
    boolean transacted;
    int share = 1;
    double warmupSecs = 2;
    double secs = 5;
    String queuePrefix = "";
    String topicPrefix = "";
    long brokerPid = -1;
    int queues = 10;
    ReplyQueues replyQueues = ReplyQueues.SHARED;
    int receiversPerQueue = 2;
    /** ps: publishers per point (0: as many as subscribers, the --clients value). */
    int publishers = 0;
    /** Messages per second each producer sends (0: as fast as the broker takes them). */
    double rate = 0;
    long replyTimeoutMs = 10_000;

    static final String USAGE = String.join("\n",
        "usage: jms-load rr|sr|ps [options]",
        "  --url amqp://host:port      broker (default amqp://localhost:5672)",
        "  --user U --password P       credentials (default none)",
        "  --broker NAME               name printed in RESULT lines (default unknown)",
        "  --clients 1,16,64           points: requesters / senders / subscribers per step",
        "  --publishers N              ps: publishers per point (default: as many as subscribers)",
        "  --rate R                    messages per second per sender or publisher (default 0: unthrottled)",
        "  --size 2KB                  message body (B, KB = 1024, MB)",
        "  --persistent                persistent messages (default non-persistent)",
        "  --ack auto|client|dups_ok|none   acknowledge mode (none: Qpid's NO_ACKNOWLEDGE)",
        "  --transacted                transacted sessions, commit after each send and receive",
        "  --share N                   applications per JMS connection, a session each (default 1)",
        "  --warmup S --secs S         warm-up and measured seconds per step (default 2 and 5)",
        "  --queue-prefix P            prefix of every queue address (RabbitMQ: /amq/queue/)",
        "  --topic-prefix P            prefix of every topic address (RabbitMQ: /topic/)",
        "  --queues N                  request queues REQUEST.1..N (rr) or topics PS.1..N (ps) (10)",
        "  --reply-queues shared|per-requester   rr: REPLY with a selector, or REPLY.<i> (shared)",
        "  --receivers-per-queue N     sr: receivers on each SR.<i> (default 2)",
        "  --broker-pid PID            broker process whose CPU is measured from /proc/PID/stat",
        "  --url-options O             Qpid JMS URI options (default: 10 s connect/request timeouts,"
        + " jms.receiveLocalOnly=true)");

    static Options parse(String[] args) {
        if (args.length == 0) throw new IllegalArgumentException("no workload given");
        Options o = new Options();
        o.bench = switch (args[0].toLowerCase(Locale.ROOT)) {
            case "rr" -> Bench.RR;
            case "sr" -> Bench.SR;
            case "ps" -> Bench.PS;
            default -> throw new IllegalArgumentException("unknown workload " + args[0] + " (rr, sr or ps)");
        };
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--persistent" -> o.persistent = true;
                case "--transacted" -> o.transacted = true;
                default -> {
                    if (i + 1 >= args.length) throw new IllegalArgumentException(a + " needs a value");
                    String v = args[++i];
                    switch (a) {
                        case "--url" -> o.url = v;
                        case "--url-options" -> o.urlOptions = v;
                        case "--user" -> o.user = v;
                        case "--password" -> o.password = v;
                        case "--broker" -> o.broker = v;
                        case "--clients" -> o.clients = parseList(v);
                        case "--size" -> o.size = parseSize(v);
                        case "--ack" -> o.ack = parseAck(v);
                        case "--share" -> o.share = positive(a, v);
                        case "--warmup" -> o.warmupSecs = nonNegative(a, v);
                        case "--secs" -> o.secs = nonNegative(a, v);
                        case "--queue-prefix" -> o.queuePrefix = v;
                        case "--topic-prefix" -> o.topicPrefix = v;
                        case "--queues" -> o.queues = positive(a, v);
                        case "--receivers-per-queue" -> o.receiversPerQueue = positive(a, v);
                        case "--publishers" -> o.publishers = positive(a, v);
                        case "--rate" -> o.rate = Double.parseDouble(v);
                        case "--broker-pid" -> o.brokerPid = positive(a, v);
                        case "--reply-queues" -> o.replyQueues = switch (v) {
                            case "shared" -> ReplyQueues.SHARED;
                            case "per-requester" -> ReplyQueues.PER_REQUESTER;
                            default -> throw new IllegalArgumentException("--reply-queues shared|per-requester");
                        };
                        default -> throw new IllegalArgumentException("unknown option " + a);
                    }
                }
            }
        }
        if (o.secs <= 0) throw new IllegalArgumentException("--secs must be > 0");
        return o;
    }

    /** The broker URI Qpid JMS connects to, with the generator's timeouts. */
    String connectionUri() {
        if (urlOptions.isEmpty()) return url;
        return url + (url.contains("?") ? "&" : "?") + urlOptions;
    }

    private static List<Integer> parseList(String v) {
        List<Integer> out = new ArrayList<>();
        for (String p : v.split(",")) out.add(positive("--clients", p.trim()));
        return out;
    }

    static int parseSize(String v) {
        String s = v.trim().toUpperCase(Locale.ROOT);
        long mult = 1;
        if (s.endsWith("KB")) { mult = 1024; s = s.substring(0, s.length() - 2); }
        else if (s.endsWith("MB")) { mult = 1024 * 1024; s = s.substring(0, s.length() - 2); }
        else if (s.endsWith("B")) { s = s.substring(0, s.length() - 1); }
        try {
            long n = Long.parseLong(s) * mult;
            if (n < 0 || n > Integer.MAX_VALUE) throw new NumberFormatException();
            return (int) n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad --size " + v + " (e.g. 256B, 2KB, 1MB)");
        }
    }

    private static Ack parseAck(String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "auto" -> Ack.AUTO;
            case "client" -> Ack.CLIENT;
            case "dups_ok", "dups-ok" -> Ack.DUPS_OK;
            case "none", "no_acknowledge", "no-ack" -> Ack.NONE;
            default -> throw new IllegalArgumentException("--ack auto|client|dups_ok|none");
        };
    }

    private static int positive(String name, String v) {
        try {
            int n = Integer.parseInt(v);
            if (n > 0) return n;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + " needs a positive integer, got " + v);
    }

    private static double nonNegative(String name, String v) {
        try {
            double d = Double.parseDouble(v);
            if (d >= 0) return d;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + " needs a number of seconds >= 0, got " + v);
    }
}
