//! The follower's snapshot download (KIP-630): a Fetch answered with a SnapshotId switches the
//! follower to FetchSnapshot requests until the whole file is here; then the log restarts at
//! the snapshot's end offset.

use kafka_protocol::messages::fetch_snapshot_request::{
    PartitionSnapshot, SnapshotId, TopicSnapshot,
};
use kafka_protocol::messages::{BrokerId, FetchSnapshotRequest, FetchSnapshotResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::errors;
use super::io::Output;
use super::log::LogReader;
use super::state::Role;
use super::types::{Endpoint, OffsetAndEpoch, METADATA_PARTITION, METADATA_TOPIC_NAME};
use crate::codec::RequestBody;

impl RaftCore {
    /// A Fetch answer named a snapshot to load.
    pub(super) fn start_snapshot_download(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        id: OffsetAndEpoch,
    ) {
        if id.epoch < 0 || id.offset < 0 {
            tracing::error!(
                node_id = self.local.id,
                "leader {from} sent an invalid snapshot id {}-{}",
                id.offset,
                id.epoch
            );
            self.requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms);
            return;
        }
        // Kafka's createNewSnapshotUnchecked: nothing to do if we already have it.
        if log
            .latest_snapshot_id()
            .is_some_and(|latest| latest.offset >= id.offset)
        {
            tracing::info!(
                node_id = self.local.id,
                "Leader {from} returned snapshot {}-{} which is already stored",
                id.offset,
                id.epoch
            );
            return;
        }
        tracing::info!(
            node_id = self.local.id,
            "Fetching snapshot {}-{} from leader {from}",
            id.offset,
            id.epoch
        );
        if let Role::Follower(f) = &mut self.role {
            f.fetching_snapshot = Some((id, 0));
        }
    }

    pub(super) fn build_fetch_snapshot_request(
        &self,
        id: OffsetAndEpoch,
        position: i64,
    ) -> RequestBody {
        let partition = PartitionSnapshot::default()
            .with_partition(METADATA_PARTITION)
            .with_current_leader_epoch(self.role.epoch())
            .with_snapshot_id(
                SnapshotId::default()
                    .with_end_offset(id.offset)
                    .with_epoch(id.epoch),
            )
            .with_position(position)
            .with_replica_directory_id(self.local.directory_id);
        RequestBody::FetchSnapshot(
            FetchSnapshotRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_replica_id(BrokerId(self.local.id))
                .with_max_bytes(self.cfg.fetch_snapshot_max_bytes)
                .with_topics(vec![TopicSnapshot::default()
                    .with_name(TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME)))
                    .with_partitions(vec![partition])]),
        )
    }

    pub(super) fn handle_fetch_snapshot_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        resp: &FetchSnapshotResponse,
    ) {
        if resp.error_code != errors::NONE {
            return self.handle_top_level_error(
                now_ms,
                from,
                kafka_protocol::messages::ApiKey::FetchSnapshot,
                resp.error_code,
            );
        }
        let Some(p) = resp
            .topics
            .first()
            .and_then(|t| t.partitions.first())
            .cloned()
        else {
            return self
                .requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms);
        };
        let leader_id = p.current_leader.leader_id.0;
        let endpoint = resp
            .node_endpoints
            .iter()
            .find(|n| n.node_id.0 == leader_id)
            .map(|n| Endpoint {
                host: n.host.to_string(),
                port: n.port,
            });
        if self.handle_common_response(
            now_ms,
            log,
            from,
            p.error_code,
            leader_id,
            p.current_leader.leader_epoch,
            endpoint,
        ) {
            return;
        }
        self.requests.on_success(from);
        let fetch_timeout = self.cfg.fetch_timeout_ms;
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        let Some((expected, position)) = f.fetching_snapshot else {
            return;
        };
        if p.error_code == errors::SNAPSHOT_NOT_FOUND
            || p.snapshot_id.end_offset < 0
            || p.snapshot_id.epoch < 0
        {
            // The leader deleted it meanwhile: start over with a Fetch.
            tracing::info!(
                node_id = self.local.id,
                "Leader no longer has snapshot {}-{}; fetching again",
                expected.offset,
                expected.epoch
            );
            f.fetching_snapshot = None;
            f.reset_fetch_timeout(now_ms, fetch_timeout);
            self.outputs
                .push_back(Output::AbandonSnapshot { id: expected });
            return;
        }
        if p.error_code != errors::NONE {
            return self
                .requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms);
        }
        let id = OffsetAndEpoch::new(p.snapshot_id.end_offset, p.snapshot_id.epoch);
        if id != expected || p.position != position {
            // Kafka throws here (the raft thread dies); we drop the download and start over,
            // which loses nothing: the partial file is not a snapshot until frozen.
            tracing::error!(
                node_id = self.local.id,
                "FetchSnapshot answer for {}-{} at {} does not continue download {}-{} at {position}",
                id.offset, id.epoch, p.position, expected.offset, expected.epoch
            );
            f.fetching_snapshot = None;
            self.outputs
                .push_back(Output::AbandonSnapshot { id: expected });
            return;
        }
        let bytes = p.unaligned_records.clone();
        let new_position = position + bytes.len() as i64;
        f.reset_fetch_timeout(now_ms, fetch_timeout);
        self.outputs.push_back(Output::SnapshotChunk {
            id,
            position,
            bytes,
        });
        if new_position >= p.size {
            f.fetching_snapshot = None;
            tracing::info!(
                node_id = self.local.id,
                "Downloaded snapshot {}-{} ({} bytes); restarting the log at {}",
                id.offset,
                id.epoch,
                p.size,
                id.offset
            );
            self.outputs.push_back(Output::InstallSnapshot { id });
            // Voters come from the snapshot once installed (read on the next call).
            self.history_reload = Some(id);
            self.written_end = None;
            self.log_refresh_needed = true;
            self.update_high_watermark(id.offset);
        } else {
            f.fetching_snapshot = Some((id, new_position));
        }
    }
}
