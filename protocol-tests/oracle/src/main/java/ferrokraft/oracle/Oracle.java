package ferrokraft.oracle;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;
// Kafka 4.4 moved the batch classes (MemoryRecords, MemoryRecordsBuilder, RecordBatch,
// ControlRecordType) to record.internal; importing both packages on demand compiles against
// either release (record.internal exists before 4.4 through PackageAnchor in this project).
import org.apache.kafka.common.record.*;
import org.apache.kafka.common.record.internal.*;

/**
 * Apache Kafka's own message classes as an oracle for ferrokraft's codec.
 *
 * <pre>
 *   generate KEY:MIN-MAX...   print one vector line per API x version (request and response
 *                             bodies), request/response headers, KRaft control record values
 *                             and KRaft record batches
 *   verify FILE               for each vector line in FILE (bytes written by ferrokraft), decode
 *                             it with Kafka's classes, compare with what generate builds for that
 *                             label (equals) and with Kafka's own bytes; print OK or MISMATCH
 *   decode FILE               print what Kafka decodes from each line (debugging)
 *   envelope build|read FILE  Envelope (API 58) as a broker forwards a request and reads the
 *                             answer (see EnvelopeOracle)
 *   metadata-records          print only the metadata_record vectors (for releases whose RPC
 *                             schemas the walker does not cover, e.g. 4.4's NULLABLE_RECORDS)
 * </pre>
 *
 * A vector line is {@code LABEL... HEX} ({@code -} for no bytes); the labels are
 * {@code API_KEY VERSION request|response}, {@code API_KEY VERSION request|response null} (nullable
 * fields null, other arrays one element, tagged fields absent), {@code request_header API_KEY VERSION HEADER_VERSION},
 * {@code response_header API_KEY VERSION HEADER_VERSION},
 * {@code control_record NAME TYPE VERSION [as_written]} ({@code as_written}: the record's own
 * {@code Version} field equals the schema version, as Kafka always writes it) and
 * {@code batch NAME}.
 *
 * <p>Bodies and control records are filled by walking Kafka's schema for the exact version: every
 * field, tagged ones included, gets a non-default value drawn from a Random seeded by the label,
 * every array two elements. The schema-written bytes are then read by the generated message
 * class and written again by it; the two byte strings must agree, so a field the walk missed or
 * a default the message writer would drop fails the generation instead of slipping through.
 */
public final class Oracle {
    private Oracle() {}

    /** A label's expected message, its bytes as Kafka writes them, and Kafka's reader for it. */
    record Vector(Object message, byte[] bytes, Function<ByteBuffer, Object> reader) {}

    static final long TIMESTAMP = 1_700_000_000_000L;

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        switch (args[0]) {
            case "generate" -> generate(Arrays.copyOfRange(args, 1, args.length));
            case "metadata-records" -> metadataRecords();
            case "verify" -> {
                if (args.length != 2) usage();
                System.exit(verify(Path.of(args[1])) ? 0 : 1);
            }
            case "decode" -> {
                if (args.length != 2) usage();
                decode(Path.of(args[1]));
            }
            case "envelope" -> EnvelopeOracle.run(Arrays.copyOfRange(args, 1, args.length));
            default -> usage();
        }
    }

    static void usage() {
        System.err.println("usage: Oracle generate KEY:MIN-MAX... | verify FILE | decode FILE | envelope ... | metadata-records");
        System.exit(2);
    }

    // ---------------------------------------------------------------- commands

    /** The kafka-clients version; AppInfoParser moved to utils.internals in 4.4. */
    static String kafkaVersion() {
        for (String name : List.of("org.apache.kafka.common.utils.AppInfoParser",
                "org.apache.kafka.common.utils.internals.AppInfoParser")) {
            try {
                return (String) Class.forName(name).getMethod("getVersion").invoke(null);
            } catch (ReflectiveOperationException e) {
                // try the next location
            }
        }
        throw new IllegalStateException("no AppInfoParser in kafka-clients");
    }

    static void metadataRecords() {
        String version = kafkaVersion();
        System.out.println("# Apache Kafka " + version + " metadata record vectors. Regenerate: see"
            + " protocol-tests/README.md (Oracle metadata-records against kafka-metadata " + version + ")");
        for (MetadataRecordType t : MetadataRecordType.values()) {
            for (short v = t.lowestSupportedVersion(); v <= t.highestSupportedVersion(); v++) {
                String label = "metadata_record " + t.newMetadataRecord().getClass().getSimpleName() + " " + t.id() + " " + v;
                System.out.println(label + " " + hex(vector(label.split(" ")).bytes()));
            }
        }
    }

    static void generate(String[] ranges) {
        if (ranges.length == 0) usage();
        String version = kafkaVersion();
        System.out.println("# Apache Kafka " + version + " (kafka-clients " + version + ") protocol vectors."
            + " Regenerate: KAFKA_VERSION=" + version
            + " UPDATE_GOLDEN=1 cargo test --test protocol oracle_generate_matches_golden");
        List<String> labels = new ArrayList<>();
        List<String> headers = new ArrayList<>();
        for (String range : ranges) {
            String[] keyAndVersions = range.split(":");
            String[] minMax = keyAndVersions[1].split("-");
            short key = Short.parseShort(keyAndVersions[0]);
            ApiMessageType type = ApiMessageType.fromApiKey(key);
            for (short v = Short.parseShort(minMax[0]); v <= Short.parseShort(minMax[1]); v++) {
                labels.add(key + " " + v + " request");
                labels.add(key + " " + v + " response");
                labels.add(key + " " + v + " request null");
                labels.add(key + " " + v + " response null");
                headers.add("request_header " + key + " " + v + " " + type.requestHeaderVersion(v));
                headers.add("response_header " + key + " " + v + " " + type.responseHeaderVersion(v));
            }
        }
        labels.addAll(headers);
        for (ControlRecordType t : CONTROL_TYPES) {
            labels.add("control_record " + controlClass(t).getSimpleName() + " " + t.type() + " 0");
            labels.add("control_record " + controlClass(t).getSimpleName() + " " + t.type() + " 0 as_written");
        }
        for (MetadataRecordType t : MetadataRecordType.values()) {
            for (short v = t.lowestSupportedVersion(); v <= t.highestSupportedVersion(); v++) {
                labels.add("metadata_record " + t.newMetadataRecord().getClass().getSimpleName() + " " + t.id() + " " + v);
            }
        }
        labels.addAll(List.of("batch data", "batch kraft_bootstrap", "batch leader_change",
            "batch snapshot_header", "batch snapshot_footer"));
        for (String label : labels) {
            Vector vector = vector(label.split(" "));
            System.out.println(label + " " + hex(vector.bytes()));
        }
    }

    static boolean verify(Path file) throws Exception {
        int lines = 0;
        int mismatches = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            lines++;
            String[] tokens = line.trim().split(" +");
            String label = String.join(" ", Arrays.copyOf(tokens, tokens.length - 1));
            String problem;
            try {
                problem = compare(vector(Arrays.copyOf(tokens, tokens.length - 1)), unhex(tokens[tokens.length - 1]));
            } catch (Exception e) {
                problem = "cannot check: " + e;
            }
            if (problem == null) {
                System.out.println("OK " + label);
            } else {
                mismatches++;
                System.out.println("MISMATCH " + label + ": " + problem);
            }
        }
        System.out.println("verify: " + lines + " lines, " + mismatches + " mismatches");
        return mismatches == 0 && lines > 0;
    }

    /** Null when {@code actual} decodes to the expected message and is Kafka's exact encoding of it. */
    static String compare(Vector expected, byte[] actual) {
        Object decoded;
        ByteBuffer buf = ByteBuffer.wrap(actual);
        try {
            decoded = expected.reader().apply(buf);
        } catch (RuntimeException e) {
            return "Kafka cannot decode it: " + e;
        }
        if (buf.hasRemaining()) {
            return buf.remaining() + " bytes left after decoding " + decoded;
        }
        if (expected.message() instanceof MemoryRecords && !Arrays.equals(expected.bytes(), actual)) {
            return "batch differs from Kafka's from byte " + Arrays.mismatch(expected.bytes(), actual)
                + " (expected " + hex(expected.bytes()) + ")";
        }
        if (!expected.message().equals(decoded)) {
            return "decodes to a different message:" + textDiff(expected.message().toString(), decoded.toString());
        }
        if (!Arrays.equals(expected.bytes(), actual)) {
            return "equal message but not Kafka's bytes: first difference at byte " + Arrays.mismatch(expected.bytes(), actual)
                + " (expected " + hex(expected.bytes()) + ")";
        }
        return null;
    }

    static void decode(Path file) throws Exception {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            String[] tokens = line.trim().split(" +");
            String label = String.join(" ", Arrays.copyOf(tokens, tokens.length - 1));
            try {
                ByteBuffer buf = ByteBuffer.wrap(unhex(tokens[tokens.length - 1]));
                Object decoded = vector(Arrays.copyOf(tokens, tokens.length - 1)).reader().apply(buf);
                System.out.println(label + ": " + decoded + (buf.hasRemaining() ? " (+" + buf.remaining() + " bytes)" : ""));
            } catch (Exception e) {
                System.out.println(label + ": cannot decode: " + e);
            }
        }
    }

    // ---------------------------------------------------------------- what each label means

    static Vector vector(String[] label) {
        switch (label[0]) {
            case "request_header": {
                short key = Short.parseShort(label[1]);
                short version = Short.parseShort(label[2]);
                short headerVersion = headerVersion(label, ApiMessageType.fromApiKey(key).requestHeaderVersion(version));
                Random rng = new Random(seed(label));
                RequestHeaderData header = new RequestHeaderData()
                    .setRequestApiKey(key)
                    .setRequestApiVersion(version)
                    .setCorrelationId(rng.nextInt())
                    .setClientId("raft-client-" + Integer.toHexString(rng.nextInt()) + "\u00e9");
                return messageVector(header, headerVersion, RequestHeaderData::new);
            }
            case "response_header": {
                short key = Short.parseShort(label[1]);
                short version = Short.parseShort(label[2]);
                short headerVersion = headerVersion(label, ApiMessageType.fromApiKey(key).responseHeaderVersion(version));
                ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(new Random(seed(label)).nextInt());
                return messageVector(header, headerVersion, ResponseHeaderData::new);
            }
            case "control_record": {
                ControlRecordType type = ControlRecordType.fromTypeId(Short.parseShort(label[2]));
                Class<? extends Message> cls = controlClass(type);
                if (!cls.getSimpleName().equals(label[1])) {
                    throw new IllegalArgumentException("control record type " + label[2] + " is " + cls.getSimpleName());
                }
                short version = Short.parseShort(label[3]);
                boolean asWritten = label.length == 5 && label[4].equals("as_written");
                if (label.length != 4 && !asWritten) {
                    throw new IllegalArgumentException("unknown control record variant " + String.join(" ", label));
                }
                UnaryOperator<Struct> adjust = asWritten ? s -> s.set("version", version) : s -> s;
                return filled(() -> newInstance(cls), schemas(cls), version, seed(label), false, adjust);
            }
            case "metadata_record": {
                MetadataRecordType type = MetadataRecordType.fromId(Short.parseShort(label[2]));
                Class<?> cls = type.newMetadataRecord().getClass();
                if (!cls.getSimpleName().equals(label[1])) {
                    throw new IllegalArgumentException("metadata record type " + label[2] + " is " + cls.getSimpleName());
                }
                short version = Short.parseShort(label[3]);
                Vector body = filled(type::newMetadataRecord, schemas(cls), version, seed(label), false, s -> s);
                ApiMessageAndVersion framed = new ApiMessageAndVersion((ApiMessage) body.message(), version);
                ObjectSerializationCache cache = new ObjectSerializationCache();
                ByteBuffer out = ByteBuffer.allocate(MetadataRecordSerde.INSTANCE.recordSize(framed, cache));
                MetadataRecordSerde.INSTANCE.write(framed, cache, new ByteBufferAccessor(out));
                return new Vector(framed, out.array(),
                    buf -> MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(buf), buf.remaining()));
            }
            case "batch": {
                MemoryRecords records = batch(label[1]);
                return new Vector(records, bytes(records.buffer()), buf -> {
                    MemoryRecords read = MemoryRecords.readableRecords(buf.slice());
                    buf.position(buf.limit());
                    return read;
                });
            }
            default: {
                short key = Short.parseShort(label[0]);
                short version = Short.parseShort(label[1]);
                ApiMessageType type = ApiMessageType.fromApiKey(key);
                boolean request = switch (label[2]) {
                    case "request" -> true;
                    case "response" -> false;
                    default -> throw new IllegalArgumentException("neither request nor response: " + label[2]);
                };
                boolean nulls = label.length == 4 && label[3].equals("null");
                if (label.length != 3 && !nulls) {
                    throw new IllegalArgumentException("unknown body variant " + String.join(" ", label));
                }
                return filled(request ? type::newRequest : type::newResponse,
                    request ? type.requestSchemas() : type.responseSchemas(), version, seed(label), nulls, s -> s);
            }
        }
    }

    static short headerVersion(String[] label, short kafkas) {
        short given = Short.parseShort(label[3]);
        if (given != kafkas) {
            throw new IllegalArgumentException("Kafka uses header version " + kafkas + " for " + label[1] + " v" + label[2]);
        }
        return given;
    }

    /** A deterministic seed per label, stable across JVMs (String.hashCode is specified). */
    static long seed(String[] label) {
        return String.join(" ", label).hashCode() * 1_000_003L + 0x5eed;
    }

    interface MessageReader<M> {
        M read(ByteBufferAccessor accessor, short version);
    }

    static <M extends Message> Vector messageVector(M message, short version, MessageReader<M> reader) {
        return new Vector(message, serialize(message, version), buf -> reader.read(new ByteBufferAccessor(buf), version));
    }

    /**
     * Fills every field of the schema with generated values, writes that with the schema, reads it
     * back with the generated message class and checks the class writes the same bytes.
     * {@code adjust} may override generated values before writing.
     */
    static Vector filled(Supplier<Message> empty, Schema[] schemas, short version, long seed, boolean nulls,
                         UnaryOperator<Struct> adjust) {
        if (version < 0 || version >= schemas.length || schemas[version] == null) {
            throw new IllegalArgumentException("no schema for version " + version);
        }
        Schema schema = schemas[version];
        Struct struct = adjust.apply(new Values(new Random(seed), nulls).struct(schema));
        ByteBuffer buf = ByteBuffer.allocate(schema.sizeOf(struct));
        schema.write(buf, struct);
        buf.flip();
        byte[] schemaBytes = bytes(buf);
        Message message = empty.get();
        message.read(new ByteBufferAccessor(buf), version);
        if (buf.hasRemaining()) {
            throw new IllegalStateException(message.getClass().getSimpleName() + " v" + version
                + ": the message class left " + buf.remaining() + " schema bytes unread");
        }
        byte[] messageBytes = serialize(message, version);
        if (!Arrays.equals(schemaBytes, messageBytes)) {
            throw new IllegalStateException(message.getClass().getSimpleName() + " v" + version
                + ": the message class writes other bytes than its schema: " + message);
        }
        return new Vector(message, messageBytes, b -> {
            Message m = empty.get();
            m.read(new ByteBufferAccessor(b), version);
            return m;
        });
    }

    // ---------------------------------------------------------------- values

    /**
     * Values for every schema type used by Kafka's generated messages: non-default ones, or with
     * {@code nulls} every nullable field null (records empty), every other array one element long
     * and every tagged field absent (left at its default), the other fields still non-default.
     */
    static final class Values {
        final Random rng;
        final boolean nulls;

        Values(Random rng, boolean nulls) {
            this.rng = rng;
            this.nulls = nulls;
        }

        Struct struct(Schema schema) {
            Struct struct = new Struct(schema);
            for (BoundField field : schema.fields()) {
                struct.set(field, value(field.def.type));
            }
            return struct;
        }

        Object value(Type t) {
            if (t instanceof Schema schema) return struct(schema);
            // The records types claim to be nullable whether or not the field is: give them no bytes.
            if (nulls && (t == Type.RECORDS || t == Type.COMPACT_RECORDS)) return MemoryRecords.EMPTY;
            if (nulls && t.isNullable()) return null;
            if (t instanceof TaggedFields tagged) {
                TreeMap<Integer, Object> values = new TreeMap<>();
                if (nulls) return values;
                for (Map.Entry<Integer, Field> e : new TreeMap<>(tagged.fields()).entrySet()) {
                    values.put(e.getKey(), value(e.getValue().type));
                }
                return values;
            }
            Optional<Type> element = t.arrayElementType();
            if (element.isPresent()) {
                if (nulls) return new Object[] {value(element.get())};
                return new Object[] {value(element.get()), value(element.get())};
            }
            if (t == Type.BOOLEAN) return true;
            if (t == Type.INT8) return (byte) nonDefault(rng.nextInt(256) - 128);
            if (t == Type.INT16) return (short) nonDefault(rng.nextInt(65536) - 32768);
            if (t == Type.UINT16) return 1 + rng.nextInt(65535);
            if (t == Type.INT32) return nonDefault(rng.nextInt());
            if (t == Type.UNSIGNED_INT32) return 1 + (rng.nextLong() & 0xffff_fffeL);
            if (t == Type.INT64) return nonDefault(rng.nextLong());
            if (t == Type.FLOAT64) return rng.nextDouble() + 0.5;
            if (t == Type.UUID) return new Uuid(rng.nextLong() | 1, rng.nextLong() | 1);
            if (t == Type.STRING || t == Type.COMPACT_STRING || t == Type.NULLABLE_STRING || t == Type.COMPACT_NULLABLE_STRING) {
                // One non-ASCII character: lengths are UTF-8 byte counts, not char counts.
                return "v" + Integer.toHexString(rng.nextInt()) + "\u00e9";
            }
            if (t == Type.BYTES || t == Type.COMPACT_BYTES || t == Type.NULLABLE_BYTES || t == Type.COMPACT_NULLABLE_BYTES) {
                return ByteBuffer.wrap(randomBytes(rng, 1 + rng.nextInt(8)));
            }
            if (t == Type.RECORDS || t == Type.COMPACT_RECORDS) {
                return dataBatch(1 + rng.nextInt(1 << 20), rng.nextInt(1000), TIMESTAMP + rng.nextInt(1 << 20),
                    randomBytes(rng, 1 + rng.nextInt(16)), randomBytes(rng, 1 + rng.nextInt(16)));
            }
            throw new IllegalArgumentException("no value generator for schema type " + t);
        }

        static int nonDefault(int v) {
            return v == 0 || v == -1 ? 42 : v;
        }

        static long nonDefault(long v) {
            return v == 0 || v == -1 ? 42 : v;
        }
    }

    static byte[] randomBytes(Random rng, int n) {
        byte[] b = new byte[n];
        rng.nextBytes(b);
        return b;
    }

    // ---------------------------------------------------------------- KRaft control records and batches

    static final List<ControlRecordType> CONTROL_TYPES = List.of(ControlRecordType.LEADER_CHANGE,
        ControlRecordType.SNAPSHOT_HEADER, ControlRecordType.SNAPSHOT_FOOTER, ControlRecordType.KRAFT_VERSION,
        ControlRecordType.KRAFT_VOTERS);

    static Class<? extends Message> controlClass(ControlRecordType type) {
        return switch (type) {
            case LEADER_CHANGE -> LeaderChangeMessage.class;
            case SNAPSHOT_HEADER -> SnapshotHeaderRecord.class;
            case SNAPSHOT_FOOTER -> SnapshotFooterRecord.class;
            case KRAFT_VERSION -> KRaftVersionRecord.class;
            case KRAFT_VOTERS -> VotersRecord.class;
            default -> throw new IllegalArgumentException("not a KRaft control record: " + type);
        };
    }

    /** A KRaft data batch as MemoryRecordsBuilder writes it: v2, uncompressed, CREATE_TIME, no producer. */
    static MemoryRecords dataBatch(long baseOffset, int leaderEpoch, long timestamp, byte[]... values) {
        ByteBuffer buf = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, baseOffset, RecordBatch.NO_TIMESTAMP, RecordBatch.NO_PRODUCER_ID,
            RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, false, leaderEpoch, buf.capacity());
        for (int i = 0; i < values.length; i++) {
            builder.appendWithOffset(baseOffset + i, timestamp, (byte[]) null, values[i]);
        }
        return builder.build();
    }

    static final int LEADER_EPOCH = 7;

    static MemoryRecords batch(String name) {
        ByteBuffer buf = ByteBuffer.allocate(1024);
        Random rng = new Random(seed(new String[] {"batch", name}));
        switch (name) {
            case "data":
                // Three records; the 200-byte value needs a two-byte varint length.
                return dataBatch(1000, LEADER_EPOCH, TIMESTAMP, randomBytes(rng, 3), randomBytes(rng, 200),
                    randomBytes(rng, 12));
            case "kraft_bootstrap": {
                // What a KRaft leader writes for kraft.version 1: KRaftVersion then Voters, one control batch.
                MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buf, RecordBatch.MAGIC_VALUE_V2,
                    Compression.NONE, TimestampType.CREATE_TIME, 1003, TIMESTAMP, RecordBatch.NO_PRODUCER_ID,
                    RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, true, LEADER_EPOCH,
                    buf.capacity());
                builder.appendKRaftVersionMessage(TIMESTAMP,
                    new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1));
                VotersRecord voters = new VotersRecord().setVersion((short) 0);
                for (int id = 1; id <= 3; id++) {
                    VotersRecord.EndpointCollection endpoints = new VotersRecord.EndpointCollection();
                    endpoints.add(new VotersRecord.Endpoint().setName("CONTROLLER").setHost("controller-" + id)
                        .setPort(9093));
                    voters.voters().add(new VotersRecord.Voter().setVoterId(id)
                        .setVoterDirectoryId(new Uuid(rng.nextLong(), rng.nextLong()))
                        .setEndpoints(endpoints)
                        .setKRaftVersionFeature(new VotersRecord.KRaftVersionFeature()
                            .setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1)));
                }
                builder.appendVotersMessage(TIMESTAMP, voters);
                return builder.build();
            }
            case "leader_change": {
                LeaderChangeMessage message = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)
                    .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1),
                        new LeaderChangeMessage.Voter().setVoterId(2), new LeaderChangeMessage.Voter().setVoterId(3)))
                    .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1),
                        new LeaderChangeMessage.Voter().setVoterId(3)));
                return MemoryRecords.withLeaderChangeMessage(1005, TIMESTAMP, LEADER_EPOCH, buf, message);
            }
            case "snapshot_header":
                return MemoryRecords.withSnapshotHeaderRecord(1006, TIMESTAMP, LEADER_EPOCH, buf,
                    new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(TIMESTAMP - 1));
            case "snapshot_footer":
                return MemoryRecords.withSnapshotFooterRecord(1007, TIMESTAMP, LEADER_EPOCH, buf,
                    new SnapshotFooterRecord().setVersion((short) 0));
            default:
                throw new IllegalArgumentException("no batch named " + name);
        }
    }

    // ---------------------------------------------------------------- plumbing

    static byte[] serialize(Message message, short version) {
        return bytes(MessageUtil.toByteBufferAccessor(message, version).buffer());
    }

    static byte[] bytes(ByteBuffer buf) {
        ByteBuffer dup = buf.duplicate();
        byte[] out = new byte[dup.remaining()];
        dup.get(out);
        return out;
    }

    static String hex(byte[] bytes) {
        return bytes.length == 0 ? "-" : HexFormat.of().formatHex(bytes);
    }

    static byte[] unhex(String s) {
        return s.equals("-") ? new byte[0] : HexFormat.of().parseHex(s);
    }

    static Schema[] schemas(Class<?> cls) {
        try {
            return (Schema[]) cls.getField("SCHEMAS").get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(cls + " has no SCHEMAS", e);
        }
    }

    static Message newInstance(Class<? extends Message> cls) {
        try {
            return cls.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(cls + " has no public no-arg constructor", e);
        }
    }

    /** The two toString forms around their first difference, so a mismatch line stays readable. */
    static String textDiff(String expected, String actual) {
        int i = 0;
        while (i < expected.length() && i < actual.length() && expected.charAt(i) == actual.charAt(i)) i++;
        int from = Math.max(0, i - 60);
        return " expected ..." + expected.substring(from, Math.min(expected.length(), i + 80))
            + "... got ..." + actual.substring(from, Math.min(actual.length(), i + 80)) + "...";
    }
}
