package ferry.interop;

import static ferry.interop.Interop.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.Test;

/** JMS message selectors (full grammar) evaluated by the broker. */
class SelectorTest {

    static final String[] COLORS = {"red", "green", "blue", "red's"};
    static final String[] NAMES = {"abc", "a_c", "a%c", "xyz", "ab", "ABC"};

    static String color(int i) { return COLORS[i % 4]; }
    static String name(int i) { return NAMES[i % 6]; }
    static int size(int i) { return i; }
    static boolean flag(int i) { return i % 3 == 0; }
    static boolean hasWeight(int i) { return i % 5 != 0; }
    static double weight(int i) { return i * 1.5; }
    static int priority(int i) { return i % 10; }
    static String type(int i) { return i % 2 == 0 ? "order" : "quote"; }
    static int mode(int i) { return i % 4 == 1 ? DeliveryMode.NON_PERSISTENT : DeliveryMode.PERSISTENT; }

    record Case(String selector, IntPredicate expected) {}

    static final List<Case> CASES = List.of(
            new Case("color = 'red'", i -> color(i).equals("red")),
            new Case("color = 'red''s'", i -> color(i).equals("red's")),
            new Case("color <> 'red' AND size > 10", i -> !color(i).equals("red") && size(i) > 10),
            new Case("color = 'green' OR size <= 2", i -> color(i).equals("green") || size(i) <= 2),
            new Case("NOT (color = 'blue')", i -> !color(i).equals("blue")),
            new Case("color IN ('green', 'blue')", i -> color(i).equals("green") || color(i).equals("blue")),
            new Case("color NOT IN ('green', 'blue')", i -> !(color(i).equals("green") || color(i).equals("blue"))),
            new Case("size BETWEEN 5 AND 9", i -> size(i) >= 5 && size(i) <= 9),
            new Case("size NOT BETWEEN 5 AND 20", i -> size(i) < 5 || size(i) > 20),
            new Case("name LIKE 'a%'", i -> name(i).startsWith("a")),
            new Case("name LIKE 'a_c'", i -> name(i).length() == 3 && name(i).startsWith("a") && name(i).endsWith("c")),
            new Case("name LIKE 'a\\_c' ESCAPE '\\'", i -> name(i).equals("a_c")),
            new Case("name LIKE 'a!%c' ESCAPE '!'", i -> name(i).equals("a%c")),
            new Case("name NOT LIKE 'a%'", i -> !name(i).startsWith("a")),
            new Case("weight IS NULL", i -> !hasWeight(i)),
            new Case("weight IS NOT NULL AND weight > 20.0", i -> hasWeight(i) && weight(i) > 20.0),
            new Case("flag", i -> flag(i)),
            new Case("flag = FALSE", i -> !flag(i)),
            new Case("size * 2 + 1 > 30", i -> size(i) * 2 + 1 > 30),
            new Case("-size < -20 OR size / 4 = 1", i -> -size(i) < -20 || size(i) / 4.0 == 1),
            new Case("size >= 3 AND (flag OR color = 'red') AND name <> 'xyz'",
                    i -> size(i) >= 3 && (flag(i) || color(i).equals("red")) && !name(i).equals("xyz")),
            new Case("missing = 'x'", i -> false),
            new Case("NOT (missing = 'x')", i -> false), // unknown stays unknown under NOT
            new Case("JMSPriority > 6", i -> priority(i) > 6),
            new Case("JMSType = 'quote'", i -> type(i).equals("quote")),
            new Case("JMSDeliveryMode = 'NON_PERSISTENT'", i -> mode(i) == DeliveryMode.NON_PERSISTENT),
            new Case("JMSDeliveryMode = 'PERSISTENT' AND JMSPriority < 2", i -> mode(i) == DeliveryMode.PERSISTENT && priority(i) < 2));

    @Test
    void browsers_and_consumers_with_selectors_see_exactly_the_matching_messages() throws Exception {
        drain("INTEROP.SELECTOR");
        final int n = 24;
        try (Connection c = connect()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = queue(s, "INTEROP.SELECTOR");
            MessageProducer p = s.createProducer(q);
            for (int i = 0; i < n; i++) {
                TextMessage m = s.createTextMessage("m" + i);
                m.setIntProperty("i", i);
                m.setStringProperty("color", color(i));
                m.setStringProperty("name", name(i));
                m.setIntProperty("size", size(i));
                m.setBooleanProperty("flag", flag(i));
                if (hasWeight(i)) m.setDoubleProperty("weight", weight(i));
                m.setJMSType(type(i));
                p.send(m, mode(i), priority(i), 0);
            }
            for (Case cs : CASES) {
                List<Integer> expected = new ArrayList<>();
                for (int i = 0; i < n; i++) if (cs.expected().test(i)) expected.add(i);
                List<Integer> got = new ArrayList<>();
                try (QueueBrowser b = s.createBrowser(q, cs.selector())) {
                    var e = b.getEnumeration();
                    while (e.hasMoreElements()) got.add(((Message) e.nextElement()).getIntProperty("i"));
                }
                got.sort(null); // browse order follows priority; compare sets
                assertEquals(expected, got, "selector: " + cs.selector());
            }
            // a consuming selector takes only its matches; the rest stay, in order
            List<Integer> red = new ArrayList<>();
            try (MessageConsumer mc = s.createConsumer(q, "color = 'red' AND JMSPriority >= 0")) {
                for (Message m : receiveAll(mc, 500)) red.add(m.getIntProperty("i"));
            }
            red.sort(null);
            List<Integer> expectedRed = new ArrayList<>();
            for (int i = 0; i < n; i++) if (color(i).equals("red")) expectedRed.add(i);
            assertEquals(expectedRed, red);
            try (MessageConsumer mc = s.createConsumer(q)) {
                List<Message> rest = receiveAll(mc, 500);
                assertEquals(n - expectedRed.size(), rest.size());
                for (Message m : rest) assertNotEquals("red", m.getStringProperty("color"));
            }
        }
    }
}
