//! The controller's seam with the Raft core inside the node state machine: an adapter that
//! is both the controller's `MetadataAppender` and its `KRaftVersionAccessor`. Each call goes
//! to the core (`propose_at_epoch`, `upgrade_kraft_version`, `resign`) and the core's outputs
//! are carried out before it returns, so the controller's next call sees the log as it is.

use std::collections::VecDeque;

use bytes::Bytes;

use super::{carry_out_core, NodeOutput, NodeStore};
use crate::controller::{KRaftVersionAccessor, MetadataAppender};
use crate::raft::{ProposeError, RaftCore, UpgradeKRaftVersionError};

/// The controller's way into the Raft core: each append's outputs are carried out before it
/// returns (the core's contract), so the next append sees the log as it is.
pub(super) struct CoreAppender<'a, S: NodeStore> {
    pub(super) core: &'a mut RaftCore,
    pub(super) store: &'a mut S,
    pub(super) outputs: &'a mut VecDeque<NodeOutput>,
    pub(super) role_events: &'a mut Vec<(i32, Option<i32>, bool)>,
    pub(super) image_due: &'a mut Option<i64>,
    pub(super) now_ms: u64,
    /// A store failure while carrying out an append (fatal, returned after the call).
    pub(super) failure: Option<S::Error>,
}

impl<S: NodeStore> MetadataAppender for CoreAppender<'_, S> {
    fn next_write_offset(&self) -> Option<i64> {
        if self.failure.is_some() {
            return None;
        }
        self.core.next_write_offset(&*self.store)
    }

    fn append(&mut self, epoch: i32, records: Vec<Bytes>) -> Result<i64, ProposeError> {
        if self.failure.is_some() {
            return Err(ProposeError::ShuttingDown);
        }
        let result = self
            .core
            .propose_at_epoch(self.now_ms, &*self.store, epoch, records);
        self.carry_out();
        result
    }

    fn resign(&mut self, epoch: i32) {
        if self.failure.is_some() {
            return;
        }
        self.core.resign(self.now_ms, &*self.store, epoch);
        self.carry_out();
    }
}

impl<S: NodeStore> CoreAppender<'_, S> {
    /// Carries out the Raft core's outputs of the call just made; a store failure is kept.
    fn carry_out(&mut self) {
        if let Err(e) = carry_out_core(
            self.core,
            self.store,
            self.outputs,
            self.role_events,
            self.image_due,
        ) {
            self.failure = Some(e);
        }
    }
}

impl<S: NodeStore> KRaftVersionAccessor for CoreAppender<'_, S> {
    fn kraft_version(&self) -> i16 {
        self.core.kraft_version()
    }

    fn upgrade_kraft_version(
        &mut self,
        epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<(), UpgradeKRaftVersionError> {
        if self.failure.is_some() {
            return Err(UpgradeKRaftVersionError::NotLeader(
                "the node is stopping after a store failure".into(),
            ));
        }
        let result = self.core.upgrade_kraft_version(
            self.now_ms,
            &*self.store,
            epoch,
            version,
            validate_only,
        );
        self.carry_out();
        result.map(|_| ())
    }
}
