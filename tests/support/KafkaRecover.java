import java.io.File;
import java.util.Properties;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.raft.MetadataLogConfig;
import org.apache.kafka.server.util.KafkaScheduler;

/**
 * Opens each given __cluster_metadata-0 directory with Kafka's KafkaMetadataLog (which recovers
 * it) and closes it; an argument {@code qs:<file>} instead reads that quorum-state file with
 * Kafka's FileQuorumStateStore. Prints one result line per argument.
 */
public class KafkaRecover {
    public static void main(String[] args) throws Exception {
        MetadataLogConfig config = new MetadataLogConfig(new AbstractConfig(MetadataLogConfig.CONFIG_DEF, new Properties()));
        for (String dir : args) {
            if (dir.startsWith("qs:")) {
                String file = dir.substring(3);
                try {
                    java.util.Optional<org.apache.kafka.raft.ElectionState> st =
                        new org.apache.kafka.raft.FileQuorumStateStore(new File(file)).readElectionState();
                    System.out.println(st.map(e -> "OK " + file + " epoch=" + e.epoch() + " leader=" + e.leaderIdOrSentinel()
                        + " voted=" + e.optionalVotedKey().map(k -> k.id()).orElse(-1)).orElse("OK " + file + " none"));
                } catch (Throwable t) {
                    System.out.println("FAILED " + file + " " + t.toString().replace('\n', ' '));
                }
                continue;
            }
            KafkaScheduler scheduler = new KafkaScheduler(1);
            scheduler.startup();
            try {
                kafka.raft.KafkaMetadataLog log = kafka.raft.KafkaMetadataLog.apply(
                    new TopicPartition("__cluster_metadata", 0), Uuid.METADATA_TOPIC_ID, new File(dir),
                    Time.SYSTEM, scheduler, config, 1);
                // Let the asynchronous checkpoint flushes run.
                Thread.sleep(100);
                System.out.println("OK " + dir + " " + log.endOffset().offset());
                log.close();
            } catch (Throwable t) {
                System.out.println("FAILED " + dir + " " + t.toString().replace('\n', ' '));
            }
            Thread.sleep(20);
            scheduler.shutdown();
        }
    }
}
