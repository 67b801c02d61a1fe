package ferry.interop;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;

import org.apache.qpid.jms.JmsConnectionFactory;

/** Environment and helpers shared by the interop tests. */
final class Interop {
    /** Broker under test. */
    static final String URL = env("AMQP_URL", "amqp://localhost:5672");
    static final String USER = System.getenv("AMQP_USER");
    static final String PASSWORD = System.getenv("AMQP_PASSWORD");
    /** Prepended to every queue name (RabbitMQ: /amq/queue/). */
    static final String PREFIX = env("INTEROP_QUEUE_PREFIX", "");
    /** Restarts the broker keeping its data; restart test is skipped without it. */
    static final String RESTART_CMD = System.getenv("INTEROP_RESTART_CMD");
    /** put QUEUE TEXT / get QUEUE (prints the body) with the broker's native client. */
    static final String NATIVE_PUT_CMD = System.getenv("INTEROP_NATIVE_PUT_CMD");
    static final String NATIVE_GET_CMD = System.getenv("INTEROP_NATIVE_GET_CMD");
    /** pub TOPIC TEXT / sub TOPIC (prints `subscribed`, then the first publication's body). */
    static final String NATIVE_PUB_CMD = System.getenv("INTEROP_NATIVE_PUB_CMD");
    static final String NATIVE_SUB_CMD = System.getenv("INTEROP_NATIVE_SUB_CMD");

    /** Marks a test that checks what the issue demands of Ferry where peer brokers differ. */
    static final String FERRY_SEMANTICS = "ferry_semantics";

    private Interop() {}

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    /** The broker URL with extra Qpid JMS URI options ("a=b&c=d"). */
    static String url(String options) {
        if (options == null || options.isEmpty()) return URL;
        return URL + (URL.contains("?") ? "&" : "?") + options;
    }

    /**
     * Qpid waits amqp.drainTimeout (default 60 s) for the broker to answer a drain; 10 s keeps a
     * broker that never answers from stalling the suite (tests time the operations that drain).
     */
    static final String DEFAULT_OPTIONS = "amqp.drainTimeout=10000";

    static JmsConnectionFactory factory(String options) {
        String all = options == null || options.isEmpty() ? DEFAULT_OPTIONS : DEFAULT_OPTIONS + "&" + options;
        JmsConnectionFactory f = new JmsConnectionFactory(url(all));
        if (USER != null && !USER.isEmpty()) {
            f.setUsername(USER);
            f.setPassword(PASSWORD);
        }
        return f;
    }

    /** A started connection. */
    static Connection connect(String options) throws JMSException {
        Connection c = factory(options).createConnection();
        c.start();
        return c;
    }

    static Connection connect() throws JMSException {
        return connect("");
    }

    static Queue queue(Session s, String name) throws JMSException {
        return s.createQueue(PREFIX + name);
    }

    /** Removes every message from the queue (AUTO_ACKNOWLEDGE); returns how many. */
    static int drain(String name) throws JMSException {
        try (Connection c = connect()) {
            return drain(c, name);
        }
    }

    static int drain(Connection c, String name) throws JMSException {
        int n = 0;
        try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
             MessageConsumer mc = s.createConsumer(queue(s, name))) {
            while (mc.receive(n == 0 ? 400 : 250) != null) n++;
        }
        return n;
    }

    /** Receives until the timeout passes with nothing more; returns all received. */
    static List<Message> receiveAll(MessageConsumer mc, long quietMillis) throws JMSException {
        List<Message> out = new ArrayList<>();
        Message m;
        while ((m = mc.receive(quietMillis)) != null) out.add(m);
        return out;
    }

    /** Runs a shell command (bash -c CMD ARGS...), returns stdout; fails on non-zero exit. */
    static String sh(String cmd, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("bash", "-c", cmd + " \"$@\"", "interop-cmd"));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        p.getOutputStream().close();
        byte[] out;
        try (InputStream in = p.getInputStream()) {
            ByteArrayOutputStream bo = new ByteArrayOutputStream();
            in.transferTo(bo);
            out = bo.toByteArray();
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("command timed out: " + cmd);
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("command failed (exit " + p.exitValue() + "): " + cmd + " " + String.join(" ", args));
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    /** Prints why a test is skipped, then skips it. */
    static void skipBecause(String reason) {
        System.out.println("SKIPPED: " + reason);
        org.junit.jupiter.api.Assumptions.abort(reason);
    }
}
