package ferry.peers;

import org.apache.activemq.artemis.api.core.Message;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.api.core.client.ActiveMQClient;
import org.apache.activemq.artemis.api.core.client.ClientConsumer;
import org.apache.activemq.artemis.api.core.client.ClientMessage;
import org.apache.activemq.artemis.api.core.client.ClientProducer;
import org.apache.activemq.artemis.api.core.client.ClientSession;
import org.apache.activemq.artemis.api.core.client.ClientSessionFactory;
import org.apache.activemq.artemis.api.core.client.ServerLocator;

/**
 * Artemis' own (CORE protocol) client, standing in for Ferry's native client in the
 * interop suite's "AMQP message got by the native client and back" test.
 *
 * Usage: NativeClient PORT put QUEUE TEXT   (persistent text message)
 *        NativeClient PORT get QUEUE        (prints the body; exit 1 if none within 10 s)
 */
public final class NativeClient {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: NativeClient PORT put QUEUE TEXT | NativeClient PORT get QUEUE");
            System.exit(2);
        }
        try (ServerLocator locator = ActiveMQClient.createServerLocator("tcp://localhost:" + args[0]);
             ClientSessionFactory sf = locator.createSessionFactory();
             ClientSession session = sf.createSession()) {
            String queue = args[2];
            if (args[1].equals("put")) {
                ClientProducer p = session.createProducer(queue);
                ClientMessage m = session.createMessage(Message.TEXT_TYPE, true);
                m.getBodyBuffer().writeNullableSimpleString(SimpleString.of(args[3]));
                p.send(m);
            } else if (args[1].equals("get")) {
                session.start();
                ClientConsumer c = session.createConsumer(queue);
                ClientMessage m = c.receive(10_000);
                if (m == null) {
                    System.err.println("no message on " + queue);
                    System.exit(1);
                }
                SimpleString body = m.getBodyBuffer().readNullableSimpleString();
                m.acknowledge();
                session.commit();
                System.out.print(body == null ? "" : body.toString());
                System.out.flush();
            } else {
                System.err.println("unknown command " + args[1]);
                System.exit(2);
            }
        }
    }
}
