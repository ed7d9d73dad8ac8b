import java.io.File;
import java.util.Properties;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.raft.MetadataLogConfig;
import org.apache.kafka.server.util.KafkaScheduler;

/** Opens each given __cluster_metadata-0 directory with Kafka's KafkaMetadataLog (which recovers it) and closes it. */
public class KafkaRecover {
    public static void main(String[] args) throws Exception {
        MetadataLogConfig config = new MetadataLogConfig(new AbstractConfig(MetadataLogConfig.CONFIG_DEF, new Properties()));
        for (String dir : args) {
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
