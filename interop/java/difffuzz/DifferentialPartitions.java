// The steps of tests/differential_fuzz/gen_partitions.rs on Kafka's side, called from
// DifferentialController (same package, so it reaches QuorumController's package-private
// parts): AlterPartitionReassignments, ListPartitionReassignments and UpdateFeatures as
// ControllerApis hands them to the controller, and failovers of the active controller.
//
//   REQ 45|46|57 ...   -> handle(): the controller's answer, or the request's own error
//                         response when the future fails (ControllerApis' handleError)
//   FAILOVER resign    -> the LocalLogManager resigns the controller's epoch; being the only
//                         node it is elected again (epoch + 2) and the same QuorumController
//                         renounces and reclaims
//   FAILOVER restart   -> the controller and its LocalLogManager are closed (which resigns);
//                         a new LocalLogManager for node 0 joins the same shared log and a
//                         new QuorumController, configured as the first, replays it and
//                         takes over
package org.apache.kafka.controller;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.UpdateFeaturesRequest;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metalog.LocalLogManager;

final class DifferentialPartitions {
    private DifferentialPartitions() { }

    /** The answer to a request of this module's APIs, or null for another API. */
    static ApiMessage handle(DifferentialController d, ApiKeys api, short version, ByteBufferAccessor in,
                             ControllerRequestContext ctx) throws Exception {
        switch (api) {
            case ALTER_PARTITION_REASSIGNMENTS: {
                var req = AlterPartitionReassignmentsRequest.parse(in, version);
                try {
                    return DifferentialController.await(d.controller.alterPartitionReassignments(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case LIST_PARTITION_REASSIGNMENTS: {
                var req = ListPartitionReassignmentsRequest.parse(in, version);
                try {
                    return DifferentialController.await(d.controller.listPartitionReassignments(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case UPDATE_FEATURES: {
                var req = UpdateFeaturesRequest.parse(in, version);
                try {
                    return DifferentialController.await(d.controller.updateFeatures(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            default:
                return null;
        }
    }

    /** Waits until the controller leads `epoch` and every queued event has run. */
    static void awaitClaim(DifferentialController d, int epoch) throws Exception {
        for (int i = 0; i < 4000 && d.controller.curClaimEpoch() != epoch; i++) Thread.sleep(1);
        if (d.controller.curClaimEpoch() != epoch) {
            throw new IllegalStateException("controller at epoch " + d.controller.curClaimEpoch() + ", not " + epoch);
        }
        d.quiesce();
    }

    /** FAILOVER resign | restart. */
    static void failover(DifferentialController d, String how) throws Exception {
        d.quiesce();
        int epoch = d.controller.curClaimEpoch();
        if (epoch < 0) throw new IllegalStateException("no active controller to fail over");
        LocalLogManager old = d.logEnv.logManagers().get(0);
        if (how.equals("resign")) {
            old.resign(epoch);
        } else if (how.equals("restart")) {
            var kraftVersion = old.kraftVersion();
            d.apis.close();
            d.controller.beginShutdown();
            d.controller.close();
            // Its ShutdownEvent resigns (epoch + 1) and, still registered, is elected again
            // (epoch + 2) before it leaves the shared log.
            old.close();
            LocalLogManager fresh = new LocalLogManager(new LogContext("[LocalLogManager 0'] "), 0,
                d.shared, "LocalLogManager-0r_", kraftVersion);
            d.logEnv.logManagers().set(0, fresh);
            d.build(fresh);
        } else {
            throw new IllegalArgumentException("FAILOVER " + how);
        }
        awaitClaim(d, epoch + 2);
    }
}
