// Asks a node for ApiVersions at every version Kafka's client knows, using Kafka's own request
// builder, header and response parser (kafka-clients on the class path), and prints what it got.
// Usage: java -cp '<kafka lib>/*' ApiVersionsProbe.java HOST PORT
// Exit 0 when every version is answered with NONE and parses; 1 otherwise.
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

public class ApiVersionsProbe {
    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        boolean ok = true;
        try (Socket socket = new Socket(host, port)) {
            OutputStream out = socket.getOutputStream();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int correlationId = 1000;
            for (short v = ApiKeys.API_VERSIONS.oldestVersion(); v <= ApiKeys.API_VERSIONS.latestVersion(); v++) {
                ApiVersionsRequest request = new ApiVersionsRequest.Builder().build(v);
                RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, v, "probe", ++correlationId);
                ByteBuffer payload = request.serializeWithHeader(header);
                ByteBuffer framed = ByteBuffer.allocate(4 + payload.remaining());
                framed.putInt(payload.remaining()).put(payload).flip();
                out.write(framed.array(), 0, framed.limit());
                out.flush();
                int size = in.readInt();
                byte[] body = new byte[size];
                in.readFully(body);
                ByteBuffer buf = ByteBuffer.wrap(body);
                ResponseHeader rh = ResponseHeader.parse(buf, ApiKeys.API_VERSIONS.responseHeaderVersion(v));
                ApiVersionsResponse response = ApiVersionsResponse.parse(new org.apache.kafka.common.protocol.ByteBufferAccessor(buf), v);
                ApiVersionsResponseData data = response.data();
                boolean good = rh.correlationId() == correlationId && data.errorCode() == 0 && !data.apiKeys().isEmpty();
                ok &= good;
                StringBuilder line = new StringBuilder();
                line.append("v").append(v).append(good ? " OK" : " BAD").append(" error=").append(data.errorCode())
                    .append(" correlation=").append(rh.correlationId()).append(" apis=");
                for (ApiVersionsResponseData.ApiVersion k : data.apiKeys()) {
                    line.append(ApiKeys.forId(k.apiKey()).name).append(':').append(k.minVersion()).append('-').append(k.maxVersion()).append(',');
                }
                line.append(" features=");
                for (ApiVersionsResponseData.SupportedFeatureKey f : data.supportedFeatures()) {
                    line.append(f.name()).append(':').append(f.minVersion()).append('-').append(f.maxVersion()).append(',');
                }
                System.out.println(line);
            }
        }
        System.exit(ok ? 0 : 1);
    }
}
