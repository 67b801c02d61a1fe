package ferry.peers;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.apache.activemq.artemis.api.core.QueueConfiguration;
import org.apache.activemq.artemis.api.core.RoutingType;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.io.aio.AIOSequentialFileFactory;
import org.apache.activemq.artemis.core.server.JournalType;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.core.settings.impl.AddressFullMessagePolicy;
import org.apache.activemq.artemis.core.settings.impl.AddressSettings;

/**
 * Embedded ActiveMQ Artemis as a peer AMQP 1.0 broker.
 *
 * Usage: ArtemisPeer PORT DATA_DIR [QUEUE_SPEC...]
 *   QUEUE_SPEC = NAME | NAME:MAXDEPTH | @FILE (lines "NAME [maxdepth=N]", '#' comments)
 *
 * - one acceptor on 0.0.0.0:PORT speaking AMQP and CORE (CORE only for the native put/get tool)
 * - persistence ON, journal under DATA_DIR (ASYNCIO when libaio is usable, else NIO; printed)
 * - security OFF
 * - every listed queue is created as a durable ANYCAST queue on an address of the same name,
 *   so AMQP address "NAME" is the queue NAME
 * - a MAXDEPTH becomes address-settings max-size-messages=N with address-full-policy FAIL
 *   (a send beyond it is rejected with amqp:resource-limit-exceeded)
 * - auto-creation of queues/addresses is OFF (like Ferry / IBM MQ: an unknown queue is
 *   amqp:not-found); ARTEMIS_AUTO_CREATE=true restores Artemis' default
 */
public final class ArtemisPeer {

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: ArtemisPeer PORT DATA_DIR [NAME | NAME:MAXDEPTH | @queues.txt ...]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        File data = new File(args[1]).getAbsoluteFile();
        data.mkdirs();
        Map<String, Long> queues = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            parseSpec(args[i], queues);
        }

        Configuration config = new ConfigurationImpl();
        config.setName("ferry-peer-artemis");
        config.setPersistenceEnabled(true);
        config.setSecurityEnabled(false);
        config.setJournalDatasync(true);
        config.setJournalDirectory(new File(data, "journal").getPath());
        config.setBindingsDirectory(new File(data, "bindings").getPath());
        config.setPagingDirectory(new File(data, "paging").getPath());
        config.setLargeMessagesDirectory(new File(data, "large-messages").getPath());
        File journalDir = new File(data, "journal");
        journalDir.mkdirs();
        JournalType jt = AIOSequentialFileFactory.isSupported(journalDir) ? JournalType.ASYNCIO : JournalType.NIO;
        config.setJournalType(jt);
        config.setMessageExpiryScanPeriod(500);
        // Artemis blocks every producer once the disk is 90% used ("Disk Full!"), which a shared
        // build machine often is; a benchmark peer should not: off unless ARTEMIS_MAX_DISK_USAGE says
        config.setMaxDiskUsage(Integer.parseInt(System.getenv().getOrDefault("ARTEMIS_MAX_DISK_USAGE", "-1")));
        config.addAcceptorConfiguration("amqp",
                "tcp://0.0.0.0:" + port + "?protocols=AMQP,CORE;amqpIdleTimeout=30000");

        boolean autoCreate = Boolean.parseBoolean(System.getenv().getOrDefault("ARTEMIS_AUTO_CREATE", "false"));
        AddressSettings all = new AddressSettings()
                .setAutoCreateQueues(autoCreate)
                .setAutoCreateAddresses(autoCreate)
                .setAutoCreateJmsQueues(autoCreate)
                .setAutoCreateJmsTopics(autoCreate)
                .setMaxDeliveryAttempts(-1)   // never dead-letter on its own: tests count redeliveries
                .setAddressFullMessagePolicy(AddressFullMessagePolicy.PAGE);
        config.addAddressSetting("#", all);

        for (Map.Entry<String, Long> q : queues.entrySet()) {
            config.addQueueConfiguration(QueueConfiguration.of(q.getKey())
                    .setAddress(q.getKey())
                    .setRoutingType(RoutingType.ANYCAST)
                    .setDurable(true));
            if (q.getValue() != null) {
                config.addAddressSetting(q.getKey(), new AddressSettings()
                        .setAutoCreateQueues(autoCreate)
                        .setAutoCreateAddresses(autoCreate)
                        .setMaxDeliveryAttempts(-1)
                        .setMaxSizeMessages(q.getValue())
                        .setAddressFullMessagePolicy(AddressFullMessagePolicy.FAIL));
            }
        }

        EmbeddedActiveMQ server = new EmbeddedActiveMQ();
        server.setConfiguration(config);
        server.start();
        System.out.println("artemis-peer: journal type " + jt
                + (jt == JournalType.NIO ? " (libaio not usable: install libaio1 for ASYNCIO)" : ""));
        System.out.println("artemis-peer: queues " + queues);
        System.out.println("artemis-peer: auto-create " + autoCreate);
        System.out.println("artemis-peer: READY amqp://localhost:" + port + " data=" + data);
        System.out.flush();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                e.printStackTrace();
            }
            stopped.countDown();
        }));
        stopped.await();
    }

    static void parseSpec(String spec, Map<String, Long> queues) throws Exception {
        if (spec.startsWith("@")) {
            List<String> lines = new ArrayList<>(Files.readAllLines(Path.of(spec.substring(1))));
            for (String line : lines) {
                String l = line.replaceAll("#.*", "").trim();
                if (l.isEmpty()) continue;
                String[] parts = l.split("\\s+");
                Long depth = null;
                for (int i = 1; i < parts.length; i++) {
                    if (parts[i].toLowerCase().startsWith("maxdepth=")) {
                        depth = Long.parseLong(parts[i].substring("maxdepth=".length()));
                    }
                }
                queues.put(parts[0], depth);
            }
        } else if (spec.contains(":")) {
            int c = spec.lastIndexOf(':');
            queues.put(spec.substring(0, c), Long.parseLong(spec.substring(c + 1)));
        } else {
            queues.put(spec, null);
        }
    }
}
