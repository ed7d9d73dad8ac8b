package ferrokraft.oracle;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AddRaftVoterRequestData;
import org.apache.kafka.common.message.RemoveRaftVoterRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddRaftVoterRequest;
import org.apache.kafka.common.requests.DescribeQuorumRequest;
import org.apache.kafka.common.requests.EnvelopeRequest;
import org.apache.kafka.common.requests.EnvelopeResponse;
import org.apache.kafka.common.requests.RemoveRaftVoterRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder;

/**
 * Envelope (API 58) the way a Kafka broker's forwarding path builds it and reads the answer.
 *
 * <pre>
 *   envelope build       print "envelope API VERSION CORRELATION HEX" per case: an Envelope request
 *                        frame body (envelope header + body) around an inner request (header +
 *                        body) made by Kafka's request classes, the principal serialized by
 *                        DefaultKafkaPrincipalBuilder, the client address as raw bytes
 *   envelope read FILE   each line "API VERSION CORRELATION HEX" is an Envelope response frame
 *                        body (written by ferrokraft) to the case with that inner API, version
 *                        and correlation id; print "API VERSION CORRELATION envelope_error=NAME"
 *                        or "... inner=DATA" as Kafka parses it (inner header included)
 * </pre>
 */
final class EnvelopeOracle {
    private EnvelopeOracle() {}

    static final String INNER_CLIENT_ID = "adminclient-1";
    static final String ENVELOPE_CLIENT_ID = "broker-100-forwarding";
    static final int ENVELOPE_CORRELATION_ID = 4242;
    static final String CLIENT_ADDRESS = "192.0.2.7";
    static final String PRINCIPAL_NAME = "alice";

    static void run(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("build")) {
            build();
        } else if (args.length == 2 && args[0].equals("read")) {
            read(Path.of(args[1]));
        } else {
            System.err.println("usage: Oracle envelope build | envelope read FILE");
            System.exit(2);
        }
    }

    static void build() throws Exception {
        int correlation = 700;
        for (short v = 0; v <= ApiKeys.DESCRIBE_QUORUM.latestVersion(); v++) {
            DescribeQuorumRequest.Builder b = new DescribeQuorumRequest.Builder(
                DescribeQuorumRequest.singletonRequest(new TopicPartition("__cluster_metadata", 0)));
            print(ApiKeys.DESCRIBE_QUORUM, v, correlation++, b.build(v));
        }
        AddRaftVoterRequestData add = new AddRaftVoterRequestData()
            .setClusterId("I4ZmrWqfT2e-upky_4fdPA")
            .setTimeoutMs(30000)
            .setVoterId(3)
            .setVoterDirectoryId(Uuid.fromString("b8tRS7h4TJ2Vt43Dp85v2A"));
        add.listeners().add(new AddRaftVoterRequestData.Listener()
            .setName("CONTROLLER").setHost("127.0.0.1").setPort(9093));
        print(ApiKeys.ADD_RAFT_VOTER, (short) 0, correlation++,
            new AddRaftVoterRequest.Builder(add).build((short) 0));
        RemoveRaftVoterRequestData remove = new RemoveRaftVoterRequestData()
            .setClusterId("I4ZmrWqfT2e-upky_4fdPA")
            .setVoterId(1)
            .setVoterDirectoryId(Uuid.fromString("qVJ3K2KXR0uQk8b4cZ0v1w"));
        print(ApiKeys.REMOVE_RAFT_VOTER, (short) 0, correlation,
            new RemoveRaftVoterRequest.Builder(remove).build((short) 0));
    }

    /** As the broker's ForwardingManager wraps a client request, then NetworkClient frames it. */
    static void print(ApiKeys api, short version, int correlation, AbstractRequest inner)
            throws Exception {
        ByteBuffer innerBytes = inner.serializeWithHeader(
            new RequestHeader(api, version, INNER_CLIENT_ID, correlation));
        byte[] principal = new DefaultKafkaPrincipalBuilder(null, null)
            .serialize(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, PRINCIPAL_NAME));
        byte[] address = InetAddress.getByName(CLIENT_ADDRESS).getAddress();
        EnvelopeRequest envelope = new EnvelopeRequest.Builder(innerBytes, principal, address)
            .build((short) 0);
        ByteBuffer frame = envelope.serializeWithHeader(new RequestHeader(
            ApiKeys.ENVELOPE, (short) 0, ENVELOPE_CLIENT_ID, ENVELOPE_CORRELATION_ID));
        System.out.println("envelope " + api.id + " " + version + " " + correlation + " " + hex(frame));
    }

    /** As the broker's ForwardingManager reads the controller's answer. */
    static void read(Path file) throws Exception {
        for (String line : Files.readAllLines(file)) {
            if (line.isBlank()) continue;
            String[] f = line.trim().split(" ");
            ApiKeys api = ApiKeys.forId(Short.parseShort(f[0]));
            short version = Short.parseShort(f[1]);
            int correlation = Integer.parseInt(f[2]);
            ByteBuffer buf = ByteBuffer.wrap(HexFormat.of().parseHex(f[3]));
            String prefix = f[0] + " " + f[1] + " " + f[2] + " ";
            try {
                ResponseHeader header = ResponseHeader.parse(
                    buf, ApiKeys.ENVELOPE.responseHeaderVersion((short) 0));
                if (header.correlationId() != ENVELOPE_CORRELATION_ID) {
                    System.out.println(prefix + "envelope_correlation_id=" + header.correlationId());
                    continue;
                }
                EnvelopeResponse envelope = EnvelopeResponse.parse(new ByteBufferAccessor(buf), (short) 0);
                if (envelope.error() != Errors.NONE) {
                    System.out.println(prefix + "envelope_error=" + envelope.error().name()
                        + " data=" + (envelope.responseData() == null ? "null" : "present"));
                    continue;
                }
                AbstractResponse inner = AbstractResponse.parseResponse(envelope.responseData(),
                    new RequestHeader(api, version, INNER_CLIENT_ID, correlation));
                System.out.println(prefix + "inner=" + inner.data());
            } catch (Exception e) {
                System.out.println(prefix + "failed=" + e);
            }
        }
    }

    static String hex(ByteBuffer buf) {
        byte[] bytes = new byte[buf.remaining()];
        buf.duplicate().get(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
