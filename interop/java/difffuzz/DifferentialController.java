// Drives one Apache Kafka QuorumController in-process for tests/differential_fuzz.rs.
//
// Data flow: the test writes one command a line on stdin; this program answers one line each
// on stdout. Everything else (Kafka's own logging) goes to stderr.
//
//   NEW                              -> a fresh controller on a LocalLogManager, active, its
//                                       cluster id and activation records:
//                                       OK <cluster-id> <rec-hex>...
//   REQ <api> <ver> <hex> [<hint>]   -> the request decoded at <ver>, handled as the
//                                       controller's ControllerApis would, its response encoded
//                                       at <ver> and the records committed meanwhile:
//                                       OK <resp-hex> <rec-hex>...
//   TIME <ms>                        -> the mock clock moves, due deferred events (session
//                                       expiry fencing) run:      OK - <rec-hex>...
//
// <hint>: ferrokraft's own replica placement for this request (topics '|', partitions ';',
// replicas ','). Kafka's StripedReplicaPlacer runs first (its refusals stand); when it places,
// the hint replaces its choice if it keeps the placer's invariants, so both controllers hold
// the same replicas downstream. A hint that breaks them is answered "PLACEMENT <why>".
//
// Lives in Kafka's controller package only to reach QuorumController.appendReadEvent (used to
// wait until every due deferred event has run).
package org.apache.kafka.controller;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.*;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.placement.*;
import org.apache.kafka.metalog.LocalLogManagerTestEnv;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.server.fault.FaultHandlerException;

public class DifferentialController {
    /** A clock that moves only when told (Kafka's MockTime, without the test jar it sits in). */
    static final class StepTime implements Time {
        volatile long nanos = TimeUnit.MILLISECONDS.toNanos(1_000);
        public long milliseconds() { return TimeUnit.NANOSECONDS.toMillis(nanos); }
        public long nanoseconds() { return nanos; }
        public void sleep(long ms) { nanos += TimeUnit.MILLISECONDS.toNanos(ms); }
        public void waitObject(Object o, java.util.function.Supplier<Boolean> c, long deadline) {
            throw new UnsupportedOperationException("waitObject");
        }
    }

    /** Kafka's placer, with ferrokraft's choice substituted when it keeps its invariants. */
    static final class HintedPlacer implements ReplicaPlacer {
        final StripedReplicaPlacer kafka = new StripedReplicaPlacer(new Random(42));
        final Deque<List<List<Integer>>> hints = new ArrayDeque<>();
        String broken;

        public TopicAssignment place(PlacementSpec spec, ClusterDescriber cluster) {
            TopicAssignment own = kafka.place(spec, cluster);
            List<List<Integer>> hint = hints.poll();
            if (hint == null) return own;
            Map<Integer, UsableBroker> usable = new HashMap<>();
            cluster.usableBrokers().forEachRemaining(b -> usable.put(b.id(), b));
            long unfenced = usable.values().stream().filter(b -> !b.fenced()).count();
            String why = null;
            if (hint.size() != own.assignments().size()) why = "partitions " + hint.size() + " != " + own.assignments().size();
            for (List<Integer> rs : hint) {
                if (why != null) break;
                if (rs.size() != spec.numReplicas()) why = "replicas " + rs;
                else if (new HashSet<>(rs).size() != rs.size()) why = "repeated broker " + rs;
                else if (!rs.stream().allMatch(usable::containsKey)) why = "unusable broker " + rs;
                else if (usable.get(rs.get(0)).fenced()) why = "fenced leader " + rs;
                else if (unfenced >= rs.size() && rs.stream().anyMatch(r -> usable.get(r).fenced())) why = "fenced replica while unfenced remain " + rs;
            }
            if (why != null) {
                broken = why;
                return own;
            }
            List<PartitionAssignment> out = new ArrayList<>();
            for (List<Integer> rs : hint) out.add(new PartitionAssignment(rs, cluster));
            return new TopicAssignment(out);
        }
    }

    static final FaultHandler FAULTS = new FaultHandler() {
        public RuntimeException handleFault(String failureMessage, Throwable cause) {
            System.err.println("FAULT " + failureMessage);
            if (cause != null) cause.printStackTrace();
            return new FaultHandlerException(failureMessage, cause);
        }
    };

    LocalLogManagerTestEnv logEnv;
    /** The log the LocalLogManagers share (a restarted controller's joins it). */
    org.apache.kafka.metalog.LocalLogManager.SharedLogData shared;
    QuorumController controller;
    /** Kafka's own ControllerApis for the request-level steps it exposes (deleteTopics,
     *  createPartitions); only its config and clock are used on those paths, no authorizer. */
    kafka.server.ControllerApis apis;
    StepTime time;
    HintedPlacer placer;
    /** This node's (0) logger manager, as ControllerApis holds it. */
    final kafka.server.logger.RuntimeLoggerManager loggers = new kafka.server.logger.RuntimeLoggerManager(
        0, org.slf4j.LoggerFactory.getLogger(DifferentialController.class));
    int seen;
    /** The token cache ControllerServer gives the controller, kept as its
     *  DelegationTokenPublisher keeps it: from the committed records (see newRecords). */
    org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache tokenCache;
    org.apache.kafka.server.DelegationTokenManager tokenManager;
    /** Delegation tokens: ControllerServer's settings from these (short lifetimes, so that
     *  renewals, expiries and the sweep happen within a sequence's mock time). */
    static final String TOKEN_KEY = "difffuzz-token-key";
    static final long TOKEN_MAX_LIFE_MS = 60_000, TOKEN_EXPIRY_MS = 20_000, TOKEN_CHECK_MS = 5_000;

    void reset() throws Exception {
        close();
        time = new StepTime();
        placer = new HintedPlacer();
        tokenCache = new org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache(
            org.apache.kafka.common.security.scram.internals.ScramMechanism.mechanismNames());
        tokenManager = null;
        logEnv = new LocalLogManagerTestEnv.Builder(1).setSharedLogDataInitializer(s -> shared = s).build();
        build(logEnv.logManagers().get(0));
        for (int i = 0; i < 2000 && controller.curClaimEpoch() < 0; i++) Thread.sleep(5);
        if (controller.curClaimEpoch() < 0) throw new IllegalStateException("controller never claimed");
        quiesce();
        seen = 0;
    }

    /** The controller (and its ControllerApis) on `raft`, configured as ControllerServer would. */
    void build(org.apache.kafka.metalog.LocalLogManager raft) throws Exception {
        QuorumController.Builder b = new QuorumController.Builder(0, logEnv.clusterId());
        b.setTime(time);
        b.setRaftClient(raft);
        b.setBootstrapMetadata(BootstrapMetadata.fromVersion(MetadataVersion.IBP_4_1_IV1, "difffuzz"));
        // ControllerServer: `unstable.feature.versions.enable`, false by default.
        b.setQuorumFeatures(new QuorumFeatures(0, QuorumFeatures.defaultSupportedFeatureMap(false), List.of(0)));
        b.setConfigSchema(kafka.server.KafkaRaftServer$.MODULE$.configSchema());
        b.setFatalFaultHandler(FAULTS);
        b.setNonFatalFaultHandler(FAULTS);
        b.setDefaultReplicationFactor((short) 1);
        b.setDefaultNumPartitions(1);
        b.setReplicaPlacer(placer);
        b.setSessionTimeoutNs(TimeUnit.MILLISECONDS.toNanos(9_000));
        // Checked every mock millisecond, so an expiry is seen at the first step past it, as
        // ferrokraft's exact expiry timer sees it.
        b.setFenceStaleBrokerIntervalNs(TimeUnit.MILLISECONDS.toNanos(1));
        b.setMaxIdleIntervalNs(OptionalLong.empty());
        b.setLeaderImbalanceCheckIntervalNs(OptionalLong.empty());
        // What Kafka's ControllerServer sets from the node's KafkaConfig: the static config and
        // the topic/broker config validator (without it unknown or invalid topic configs pass).
        Properties props = new Properties();
        props.put("process.roles", "controller");
        props.put("node.id", "0");
        props.put("controller.quorum.voters", "0@localhost:9093");
        props.put("controller.listener.names", "CONTROLLER");
        props.put("listeners", "CONTROLLER://localhost:9093");
        props.put("delegation.token.secret.key", TOKEN_KEY);
        props.put("delegation.token.max.lifetime.ms", String.valueOf(TOKEN_MAX_LIFE_MS));
        props.put("delegation.token.expiry.time.ms", String.valueOf(TOKEN_EXPIRY_MS));
        props.put("delegation.token.expiry.check.interval.ms", String.valueOf(TOKEN_CHECK_MS));
        kafka.server.KafkaConfig config = kafka.server.KafkaConfig.fromProps(props);
        // ControllerServer's delegation-token settings.
        b.setDelegationTokenCache(tokenCache);
        b.setDelegationTokenSecretKey(TOKEN_KEY);
        b.setDelegationTokenMaxLifeMs(TOKEN_MAX_LIFE_MS);
        b.setDelegationTokenExpiryTimeMs(TOKEN_EXPIRY_MS);
        b.setDelegationTokenExpiryCheckIntervalMs(TOKEN_CHECK_MS);
        if (tokenManager == null) {
            tokenManager = new org.apache.kafka.server.DelegationTokenManager(
                new org.apache.kafka.server.config.DelegationTokenManagerConfigs(config), tokenCache);
        }
        b.setStaticConfig(config.originals());
        b.setConfigurationValidator(new kafka.server.ControllerConfigurationValidator(config));
        controller = b.build();
        // Kafka's DelegationTokenControlManager reads `Time.SYSTEM` (a final field set where it
        // is declared), not the controller's clock; outside tests the two are one clock. It is
        // pointed at the mock clock so that token timestamps and expiries follow the steps.
        java.lang.reflect.Field managerField = QuorumController.class.getDeclaredField("delegationTokenControlManager");
        managerField.setAccessible(true);
        Object manager = managerField.get(controller);
        java.lang.reflect.Field timeField = manager.getClass().getDeclaredField("time");
        timeField.setAccessible(true);
        timeField.set(manager, time);
        apis = new kafka.server.ControllerApis(null, scala.Option.empty(), null, time, controller, null,
            config, logEnv.clusterId(), null, null, null);
    }

    void close() throws Exception {
        if (controller != null) {
            // Its ACL purgatory's reaper thread would outlive it (one per sequence).
            apis.close();
            controller.beginShutdown();
            controller.close();
            logEnv.close();
            controller = null;
        }
    }

    /** Waits until every event queued or due by now has run. */
    void quiesce() throws Exception {
        for (int i = 0; i < 3; i++) {
            controller.appendReadEvent("difffuzz quiesce", OptionalLong.empty(), () -> null).get(30, TimeUnit.SECONDS);
        }
    }

    String newRecords() {
        List<ApiMessageAndVersion> all = logEnv.allRecords();
        StringBuilder sb = new StringBuilder();
        for (int i = seen; i < all.size(); i++) {
            ApiMessageAndVersion r = all.get(i);
            publishToken(r);
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = MetadataRecordSerde.INSTANCE.recordSize(r, cache);
            ByteBuffer buf = ByteBuffer.allocate(size);
            MetadataRecordSerde.INSTANCE.write(r, cache, new ByteBufferAccessor(buf));
            sb.append(' ').append(hex(buf.array()));
        }
        seen = all.size();
        return sb.toString();
    }

    /** What the controller's DelegationTokenPublisher does with a committed token record. */
    void publishToken(ApiMessageAndVersion r) {
        try {
            if (r.message() instanceof org.apache.kafka.common.metadata.DelegationTokenRecord rec) {
                var info = org.apache.kafka.metadata.DelegationTokenData.fromRecord(rec).tokenInformation();
                tokenManager.updateToken(tokenManager.getDelegationToken(info));
            } else if (r.message() instanceof org.apache.kafka.common.metadata.RemoveDelegationTokenRecord rec) {
                tokenManager.removeToken(rec.tokenId());
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static ByteBuffer unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return ByteBuffer.wrap(b);
    }

    static List<List<List<Integer>>> parseHint(String s) {
        List<List<List<Integer>>> topics = new ArrayList<>();
        for (String t : s.split("\\|")) {
            List<List<Integer>> parts = new ArrayList<>();
            for (String p : t.split(";")) {
                List<Integer> rs = new ArrayList<>();
                for (String r : p.split(",")) rs.add(Integer.parseInt(r));
                parts.add(rs);
            }
            topics.add(parts);
        }
        return topics;
    }

    ControllerRequestContext context(ApiKeys api, short version) {
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id)
            .setRequestApiVersion(version).setClientId("difffuzz").setCorrelationId(1);
        return new ControllerRequestContext(header, KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    static Throwable cause(Throwable t) {
        while ((t instanceof java.util.concurrent.ExecutionException || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) t = t.getCause();
        return t;
    }

    ApiMessage handle(ApiKeys api, short version, ByteBuffer body) throws Exception {
        ByteBufferAccessor in = new ByteBufferAccessor(body);
        ControllerRequestContext ctx = context(api, version);
        switch (api) {
            case BROKER_REGISTRATION: {
                BrokerRegistrationRequestData req = new BrokerRegistrationRequestData(in, version);
                try {
                    long epoch = await(controller.registerBroker(ctx, req)).epoch();
                    return new BrokerRegistrationResponseData().setBrokerEpoch(epoch);
                } catch (Exception e) {
                    return new BrokerRegistrationResponseData().setErrorCode(Errors.forException(cause(e)).code());
                }
            }
            case BROKER_HEARTBEAT: {
                BrokerHeartbeatRequestData req = new BrokerHeartbeatRequestData(in, version);
                try {
                    var reply = await(controller.processBrokerHeartbeat(ctx, req));
                    return new BrokerHeartbeatResponseData().setIsCaughtUp(reply.isCaughtUp())
                        .setIsFenced(reply.isFenced()).setShouldShutDown(reply.shouldShutDown());
                } catch (Exception e) {
                    return new BrokerHeartbeatResponseData().setErrorCode(Errors.forException(cause(e)).code());
                }
            }
            case CREATE_TOPICS:
                return createTopics(ctx, new CreateTopicsRequestData(in, version), version);
            case DELETE_TOPICS: {
                DeleteTopicsRequestData req = new DeleteTopicsRequestData(in, version);
                scala.Function1<scala.collection.Iterable<String>, scala.collection.immutable.Set<String>> all = n -> n.<String>toSet();
                try {
                    List<DeleteTopicsResponseData.DeletableTopicResult> results =
                        await(apis.deleteTopics(ctx, req, version, true, all, all));
                    return new DeleteTopicsResponseData().setResponses(
                        new DeleteTopicsResponseData.DeletableTopicResultCollection(results.iterator()));
                } catch (Exception e) {
                    return new org.apache.kafka.common.requests.DeleteTopicsRequest.Builder(req).build(version)
                        .getErrorResponse(cause(e)).data();
                }
            }
            case CREATE_PARTITIONS: {
                CreatePartitionsRequestData req = new CreatePartitionsRequestData(in, version);
                scala.Function1<scala.collection.Iterable<String>, scala.collection.immutable.Set<String>> all = n -> n.<String>toSet();
                try {
                    return new CreatePartitionsResponseData().setResults(await(apis.createPartitions(ctx, req, all)));
                } catch (Exception e) {
                    return new org.apache.kafka.common.requests.CreatePartitionsRequest.Builder(req).build(version)
                        .getErrorResponse(cause(e)).data();
                }
            }
            case UNREGISTER_BROKER: {
                // ControllerApis.handleUnregisterBroker: the request's own error response.
                var req = org.apache.kafka.common.requests.UnregisterBrokerRequest.parse(in, version);
                try {
                    await(controller.unregisterBroker(ctx, req.data().brokerId()));
                    return new UnregisterBrokerResponseData();
                } catch (Exception e) {
                    return req.getErrorResponse(0, cause(e)).data();
                }
            }
            case ELECT_LEADERS: {
                var req = org.apache.kafka.common.requests.ElectLeadersRequest.parse(in, version);
                try {
                    return await(controller.electLeaders(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, cause(e)).data();
                }
            }
            case ALTER_PARTITION: {
                var req = org.apache.kafka.common.requests.AlterPartitionRequest.parse(in, version);
                try {
                    return await(controller.alterPartition(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, cause(e)).data();
                }
            }
            case ALTER_CONFIGS: {
                var req = org.apache.kafka.common.requests.AlterConfigsRequest.parse(in, version);
                try {
                    return legacyAlterConfigs(ctx, req.data());
                } catch (Exception e) {
                    return req.getErrorResponse(0, cause(e)).data();
                }
            }
            case INCREMENTAL_ALTER_CONFIGS:
                return incrementalAlterConfigs(ctx, new IncrementalAlterConfigsRequestData(in, version));
            case ALLOCATE_PRODUCER_IDS: {
                AllocateProducerIdsRequestData req = new AllocateProducerIdsRequestData(in, version);
                try {
                    return await(controller.allocateProducerIds(ctx, req));
                } catch (Exception e) {
                    return new AllocateProducerIdsResponseData().setErrorCode(Errors.forException(cause(e)).code());
                }
            }
            default: {
                ApiMessage answer = DifferentialPartitions.handle(this, api, version, in, ctx);
                if (answer != null) return answer;
                answer = DifferentialSecurity.handle(this, api, version, in, ctx);
                if (answer != null) return answer;
                throw new IllegalArgumentException("API not driven yet: " + api);
            }
        }
    }

    /** ControllerApis.handleIncrementalAlterConfigs without an authorizer (every resource
     *  authorized) and without BROKER_LOGGER resources (not generated): unknown resource
     *  types and duplicates answered first, then the controller's results in its map's
     *  order. */
    /** ControllerApis.authorizeAlterResource with every permission granted: a type it has
     *  no case for (BROKER_LOGGER in the legacy API) is refused before the controller. */
    static ApiError alterableType(ConfigResource resource) {
        switch (resource.type()) {
            case BROKER: case CLIENT_METRICS: case TOPIC: case GROUP: return null;
            default: return new ApiError(Errors.INVALID_REQUEST, "Unexpected resource type " + resource.type() + ".");
        }
    }

    ApiMessage incrementalAlterConfigs(ControllerRequestContext ctx, IncrementalAlterConfigsRequestData request) throws Exception {
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
        Set<ConfigResource> duplicates = new HashSet<>();
        Map<ConfigResource, Map<String, Map.Entry<AlterConfigOp.OpType, String>>> changes = new HashMap<>();
        List<IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse> loggerResponses = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource r : request.resources()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.forId(r.resourceType()), r.resourceName());
            if (resource.type() == ConfigResource.Type.BROKER_LOGGER) {
                // ControllerApis: this node's RuntimeLoggerManager (authorized, as every check
                // passes here), answered after the controller's results, in request order.
                ApiError e;
                try {
                    loggers.applyChangesForResource(true, request.validateOnly(), r);
                    e = ApiError.NONE;
                } catch (Throwable t) {
                    e = ApiError.fromThrowable(t);
                }
                loggerResponses.add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceName(r.resourceName()).setResourceType(r.resourceType())
                    .setErrorCode(e.error().code()).setErrorMessage(e.isFailure() ? e.messageWithFallback() : null));
            } else if (resource.type() == ConfigResource.Type.UNKNOWN) {
                response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setErrorCode(Errors.UNSUPPORTED_VERSION.code())
                    .setErrorMessage("Unknown resource type " + r.resourceType() + ".")
                    .setResourceName(r.resourceName()).setResourceType(r.resourceType()));
            } else if (!duplicates.contains(resource)) {
                Map<String, Map.Entry<AlterConfigOp.OpType, String>> byName = new HashMap<>();
                for (IncrementalAlterConfigsRequestData.AlterableConfig c : r.configs()) {
                    byName.put(c.name(), new AbstractMap.SimpleEntry<>(AlterConfigOp.OpType.forId(c.configOperation()), c.value()));
                }
                if (changes.put(resource, byName) != null) {
                    duplicates.add(resource);
                    changes.remove(resource);
                    response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                        .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate resource.")
                        .setResourceName(r.resourceName()).setResourceType(r.resourceType()));
                }
            }
        }
        for (Iterator<ConfigResource> it = changes.keySet().iterator(); it.hasNext(); ) {
            ConfigResource resource = it.next();
            ApiError e = alterableType(resource);
            if (e != null) {
                response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setErrorCode(e.error().code()).setErrorMessage(e.message())
                    .setResourceName(resource.name()).setResourceType(resource.type().id()));
                it.remove();
            }
        }
        Map<ConfigResource, ApiError> results = await(controller.incrementalAlterConfigs(ctx, changes, request.validateOnly()));
        results.forEach((k, v) -> response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
            .setErrorCode(v.error().code()).setErrorMessage(v.message())
            .setResourceName(k.name()).setResourceType(k.type().id())));
        response.responses().addAll(loggerResponses);
        return response;
    }

    /** ControllerApis.handleLegacyAlterConfigs without an authorizer: unknown resource types
     *  and duplicates answered first, then the controller's results in its map's order. */
    ApiMessage legacyAlterConfigs(ControllerRequestContext ctx, AlterConfigsRequestData request) throws Exception {
        AlterConfigsResponseData response = new AlterConfigsResponseData();
        Set<ConfigResource> duplicates = new HashSet<>();
        Map<ConfigResource, Map<String, String>> changes = new HashMap<>();
        for (AlterConfigsRequestData.AlterConfigsResource r : request.resources()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.forId(r.resourceType()), r.resourceName());
            if (resource.type() == ConfigResource.Type.UNKNOWN) {
                response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setErrorCode(Errors.UNSUPPORTED_VERSION.code())
                    .setErrorMessage("Unknown resource type " + r.resourceType() + ".")
                    .setResourceName(r.resourceName()).setResourceType(r.resourceType()));
            } else if (!duplicates.contains(resource)) {
                Map<String, String> configs = new HashMap<>();
                for (AlterConfigsRequestData.AlterableConfig c : r.configs()) configs.put(c.name(), c.value());
                if (changes.put(resource, configs) != null) {
                    duplicates.add(resource);
                    changes.remove(resource);
                    response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
                        .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate resource.")
                        .setResourceName(r.resourceName()).setResourceType(r.resourceType()));
                }
            }
        }
        for (Iterator<ConfigResource> it = changes.keySet().iterator(); it.hasNext(); ) {
            ConfigResource resource = it.next();
            ApiError e = alterableType(resource);
            if (e != null) {
                response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setErrorCode(e.error().code()).setErrorMessage(e.message())
                    .setResourceName(resource.name()).setResourceType(resource.type().id()));
                it.remove();
            }
        }
        Map<ConfigResource, ApiError> results = await(controller.legacyAlterConfigs(ctx, changes, request.validateOnly()));
        results.forEach((k, v) -> response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
            .setErrorCode(v.error().code()).setErrorMessage(v.message())
            .setResourceName(k.name()).setResourceType(k.type().id())));
        return response;
    }

    /** ControllerApis.createTopics with every principal authorized (ANONYMOUS, no authorizer). */
    ApiMessage createTopics(ControllerRequestContext ctx, CreateTopicsRequestData request, short version) throws Exception {
        Set<String> names = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        for (CreateTopicsRequestData.CreatableTopic t : request.topics()) {
            if (!duplicates.contains(t.name()) && !names.add(t.name())) {
                names.remove(t.name());
                duplicates.add(t.name());
            }
        }
        Set<String> allowed = new HashSet<>(names);
        allowed.remove("__cluster_metadata");
        CreateTopicsRequestData effective = request.duplicate();
        effective.topics().removeIf(t -> duplicates.contains(t.name()) || !allowed.contains(t.name()));
        try {
            CreateTopicsResponseData response = await(controller.createTopics(ctx, effective, allowed));
            for (String name : duplicates) {
                response.topics().add(new CreateTopicsResponseData.CreatableTopicResult().setName(name)
                    .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name."));
            }
            for (String name : names) {
                if (name.equals("__cluster_metadata")) {
                    response.topics().add(new CreateTopicsResponseData.CreatableTopicResult().setName(name)
                        .setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Creation of internal topic __cluster_metadata is prohibited."));
                }
            }
            return response;
        } catch (Exception e) {
            return new CreateTopicsRequest(request, version).getErrorResponse(cause(e)).data();
        }
    }

    public static void main(String[] args) throws Exception {
        DifferentialController d = new DifferentialController();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        java.io.PrintStream out = new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false);
        System.setOut(System.err);
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            try {
                switch (w[0]) {
                    case "NEW":
                        d.reset();
                        out.println("OK " + d.logEnv.clusterId() + d.newRecords());
                        break;
                    case "REQ": {
                        ApiKeys api = ApiKeys.forId(Short.parseShort(w[1]));
                        short version = Short.parseShort(w[2]);
                        d.placer.hints.clear();
                        d.placer.broken = null;
                        if (w.length > 4) d.placer.hints.addAll(parseHint(w[4]));
                        ApiMessage response = d.handle(api, version, unhex(w[3]));
                        d.quiesce();
                        if (d.placer.broken != null) {
                            out.println("PLACEMENT " + d.placer.broken);
                            break;
                        }
                        ObjectSerializationCache cache = new ObjectSerializationCache();
                        byte[] arr = new byte[response.size(cache, version)];
                        response.write(new ByteBufferAccessor(ByteBuffer.wrap(arr)), cache, version);
                        out.println("OK " + hex(arr) + d.newRecords());
                        break;
                    }
                    case "PARSE": {
                        // Bad input at the codec: what Kafka's request parser makes of a body
                        // (RequestContext.parseRequest), re-encoded at its version, or refused.
                        ApiKeys api = ApiKeys.forId(Short.parseShort(w[1]));
                        short version = Short.parseShort(w[2]);
                        ByteBuffer body = w.length > 3 ? unhex(w[3]) : ByteBuffer.allocate(0);
                        ApiMessage data;
                        try {
                            data = org.apache.kafka.common.requests.AbstractRequest
                                .parseRequest(api, version, new ByteBufferAccessor(body)).request.data();
                        } catch (Throwable t) {
                            out.println("OK refused:" + t.getClass().getSimpleName());
                            break;
                        }
                        byte[] arr;
                        try {
                            ObjectSerializationCache cache = new ObjectSerializationCache();
                            arr = new byte[data.size(cache, version)];
                            data.write(new ByteBufferAccessor(ByteBuffer.wrap(arr)), cache, version);
                        } catch (Throwable t) {
                            // Accepted, but Kafka cannot write what it read back (e.g. an
                            // unknown tagged field twice): nothing to compare byte for byte.
                            out.println("OK unwritable:" + t.getClass().getSimpleName());
                            break;
                        }
                        out.println("OK " + (arr.length == 0 ? "-" : hex(arr)));
                        break;
                    }
                    case "FAILOVER":
                        DifferentialPartitions.failover(d, w[1]);
                        out.println("OK -" + d.newRecords());
                        break;
                    case "TIME":
                        d.time.sleep(Long.parseLong(w[1]));
                        d.quiesce();
                        out.println("OK -" + d.newRecords());
                        break;
                    default:
                        out.println("ERR unknown command " + w[0]);
                }
            } catch (Throwable t) {
                t.printStackTrace();
                out.println("ERR " + String.valueOf(cause(t)).replace('\n', ' '));
            }
            out.flush();
        }
        d.close();
    }
}
