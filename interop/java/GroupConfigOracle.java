// Asks one Kafka release's controller-side GROUP config check (its
// ControllerConfigurationValidator, built on a controller KafkaConfig with the release's
// defaults) about each case it reads, for tests/interop_group_configs.rs.
//
// Data flow: one case a line on stdin, `<id> TAB <group name> TAB <k=v> (| <k=v>)*` (an empty
// third field is an empty config; no value may hold a `|`); one answer a line on stdout,
// `<id> TAB OK` or `<id> TAB <exception class> TAB <message>`. The check is the one the
// controller runs on an AlterConfigs/IncrementalAlterConfigs of a GROUP resource: the whole
// config after the change.
//
// Compile and run against a release's jars:
//   javac -cp 'interop/.kafka/4.3.2/lib/*' -d /tmp/oracle interop/java/GroupConfigOracle.java
//   java -cp '/tmp/oracle:interop/.kafka/4.3.2/lib/*' GroupConfigOracle < cases
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigResource;

public class GroupConfigOracle {
    public static void main(String[] args) throws Exception {
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
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            Map<String, String> config = new HashMap<>();
            if (fields.length > 2 && !fields[2].isEmpty()) {
                for (String pair : fields[2].split("\\|", -1)) {
                    int eq = pair.indexOf('=');
                    config.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, fields[1]);
            try {
                validator.validate(resource, config, new HashMap<>());
                System.out.println(fields[0] + "\tOK");
            } catch (RuntimeException e) {
                System.out.println(fields[0] + "\t" + e.getClass().getSimpleName() + "\t"
                    + e.getMessage());
            }
        }
    }
}
