// Asks one Kafka release's controller-side GROUP config check (its
// ControllerConfigurationValidator, built on a controller KafkaConfig with the release's
// defaults) about each case it reads, or a running controller, for
// tests/interop_group_configs.rs.
//
// Data flow: one case a line on stdin, `<id> TAB <group name> TAB <k=v> (| <k=v>)*` (an empty
// third field is an empty config; no value may hold a `|`); one answer a line on stdout,
// `<id> TAB OK` or `<id> TAB <exception class> TAB <message>`. The check is the one the
// controller runs on an AlterConfigs/IncrementalAlterConfigs of a GROUP resource: the whole
// config after the change.
//
// With `--bootstrap-controller host:port` the cases go instead to a running controller (Kafka's
// or ferrokraft's), one IncrementalAlterConfigs (validate only) each through Kafka's Admin
// client; the answer names the exception the client raised (a ConfigException on the
// controller reaches the client as InvalidConfigurationException, both INVALID_CONFIG).
// With `--describe-controller host:port` (no stdin) it prints that controller's DescribeConfigs
// of group `g` before and after one key is stored.
//
// Compile and run against a release's jars:
//   javac -cp 'interop/.kafka/4.3.2/lib/*' -d /tmp/oracle interop/java/GroupConfigOracle.java
//   java -cp '/tmp/oracle:interop/.kafka/4.3.2/lib/*' GroupConfigOracle < cases
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import java.util.ArrayList;
import java.util.Collection;
import java.util.concurrent.ExecutionException;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

public class GroupConfigOracle {
    /** One way of answering a case: OK, or the refusal's exception. */
    interface Check {
        void check(ConfigResource resource, Map<String, String> config) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--describe-controller")) {
            describe(args[1]);
            return;
        }
        Check check;
        Admin admin = null;
        if (args.length == 2 && args[0].equals("--bootstrap-controller")) {
            Properties client = new Properties();
            client.put("bootstrap.controllers", args[1]);
            client.put("request.timeout.ms", "20000");
            client.put("default.api.timeout.ms", "30000");
            Admin a = Admin.create(client);
            admin = a;
            check = (resource, config) -> {
                Collection<AlterConfigOp> ops = new ArrayList<>();
                for (Map.Entry<String, String> e : config.entrySet()) {
                    ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()),
                        AlterConfigOp.OpType.SET));
                }
                try {
                    a.incrementalAlterConfigs(Map.of(resource, ops),
                        new AlterConfigsOptions().validateOnly(true)).all().get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) {
                        throw r;
                    }
                    throw e;
                }
            };
        } else {
            check = inProcess();
        }
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            // Kept in the order the case lists them (what a client sends).
            Map<String, String> config = new java.util.LinkedHashMap<>();
            if (fields.length > 2 && !fields[2].isEmpty()) {
                for (String pair : fields[2].split("\\|", -1)) {
                    int eq = pair.indexOf('=');
                    config.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, fields[1]);
            try {
                check.check(resource, config);
                System.out.println(fields[0] + "\tOK");
            } catch (RuntimeException e) {
                System.out.println(fields[0] + "\t" + e.getClass().getSimpleName() + "\t"
                    + e.getMessage());
            }
        }
        if (admin != null) {
            admin.close();
        }
    }

    /**
     * `--describe-controller host:port`: DescribeConfigs of group `g` with nothing stored, then
     * after `consumer.session.timeout.ms=50000` is stored; one line per entry by name, `name
     * TAB value TAB source TAB type TAB synonyms`.
     */
    static void describe(String bootstrap) throws Exception {
        Properties client = new Properties();
        client.put("bootstrap.controllers", bootstrap);
        try (Admin admin = Admin.create(client)) {
            ConfigResource g = new ConfigResource(ConfigResource.Type.GROUP, "g");
            for (int round = 0; round < 2; round++) {
                if (round == 1) {
                    admin.incrementalAlterConfigs(Map.of(g, List.of(new AlterConfigOp(
                        new ConfigEntry("consumer.session.timeout.ms", "50000"),
                        AlterConfigOp.OpType.SET)))).all().get();
                }
                // A controller describes from its published image, which may trail the
                // write: after it, ask until the stored value shows (5 s at most).
                org.apache.kafka.clients.admin.Config config = null;
                for (int attempt = 0; attempt < 20; attempt++) {
                    config = admin.describeConfigs(List.of(g),
                        new org.apache.kafka.clients.admin.DescribeConfigsOptions()
                            .includeSynonyms(true)).all().get().get(g);
                    ConfigEntry set = config.get("consumer.session.timeout.ms");
                    if (round == 0 || (set != null && "50000".equals(set.value()))) {
                        break;
                    }
                    Thread.sleep(250);
                }
                System.out.println("round " + round);
                // The client keeps the entries in a hash map: by name, to compare.
                List<ConfigEntry> entries = new ArrayList<>(config.entries());
                entries.sort(java.util.Comparator.comparing(ConfigEntry::name));
                for (ConfigEntry e : entries) {
                    StringBuilder synonyms = new StringBuilder();
                    for (ConfigEntry.ConfigSynonym syn : e.synonyms()) {
                        synonyms.append(syn.name()).append('=').append(syn.value()).append('/')
                            .append(syn.source()).append(' ');
                    }
                    System.out.println(e.name() + "\t" + e.value() + "\t" + e.source() + "\t"
                        + e.type() + "\t" + synonyms.toString().trim());
                }
            }
        }
    }

    /** The release's ControllerConfigurationValidator on a default controller config. */
    static Check inProcess() {
        // The least a KRaft controller needs to start; every group bound keeps its default.
        Properties props = new Properties();
        props.put("process.roles", "controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@localhost:9093");
        props.put("controller.listener.names", "CONTROLLER");
        props.put("listeners", "CONTROLLER://localhost:9093");
        props.put("log.dirs", "/tmp/group-config-oracle");
        ControllerConfigurationValidator validator =
            new ControllerConfigurationValidator(new KafkaConfig(props));
        return (resource, config) -> validator.validate(resource, new HashMap<>(config),
            new HashMap<>());
    }
}
