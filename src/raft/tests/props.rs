//! Property tests against naive models: the leader's high-watermark rule, and the scenario
//! log's (`MemLog`) end offsets, Kafka's `endOffsetForEpoch`, truncation and crash loss
//! against a plain vector of batches.

use bytes::Bytes;
use proptest::prelude::*;

use super::mem_log::MemLog;
use crate::raft::leader::majority_high_watermark;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::LogReader;
use crate::records::batch::build_data_batch;

/// The largest known offset that a majority of voters reached, if past the epoch start.
fn naive_high_watermark(offsets: &[Option<i64>], epoch_start: i64) -> Option<i64> {
    let majority = offsets.len() / 2 + 1;
    offsets
        .iter()
        .flatten()
        .copied()
        .filter(|&c| offsets.iter().filter(|o| o.is_some_and(|v| v >= c)).count() >= majority)
        .max()
        .filter(|&c| c > epoch_start)
}

proptest! {
    #[test]
    fn high_watermark_rule_matches_the_majority_model(
        offsets in prop::collection::vec(prop::option::of(0i64..40), 1..8),
        epoch_start in 0i64..40,
    ) {
        prop_assert_eq!(
            majority_high_watermark(&offsets, epoch_start),
            naive_high_watermark(&offsets, epoch_start)
        );
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Append `count` records at the last epoch + `bump`.
    Append {
        bump: i32,
        count: usize,
    },
    /// Truncate at the start of batch `index % (len + 1)` (the end when it is `len`).
    Truncate {
        index: usize,
    },
    Flush,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0i32..3, 1usize..4).prop_map(|(bump, count)| Op::Append { bump, count }),
        1 => (0usize..64).prop_map(|index| Op::Truncate { index }),
        2 => Just(Op::Flush),
        1 => Just(Op::Crash),
    ]
}

/// A batch in the model: [base, next) at epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Batch {
    base: i64,
    next: i64,
    epoch: i32,
}

#[derive(Debug, Default)]
struct Model {
    batches: Vec<Batch>,
    /// Batches before this index are flushed.
    flushed: usize,
}

impl Model {
    fn end(&self) -> OffsetAndEpoch {
        self.batches.last().map_or(OffsetAndEpoch::new(0, 0), |b| {
            OffsetAndEpoch::new(b.next, b.epoch)
        })
    }

    /// Kafka's `endOffsetForEpoch` over the batches (KafkaMetadataLog over
    /// LeaderEpochFileCache.endOffsetFor), no snapshots.
    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        let end = self.end();
        if !self.batches.is_empty() && end.epoch == epoch {
            return OffsetAndEpoch::new(end.offset, epoch);
        }
        // Undefined in the epoch cache (above the latest epoch): the log end offset with
        // `lastFetchedEpoch` (KafkaMetadataLog's `case None`).
        let Some(higher) = self.batches.iter().find(|b| b.epoch > epoch) else {
            return end;
        };
        match self.batches.iter().rev().find(|b| b.epoch <= epoch) {
            None => OffsetAndEpoch::new(higher.base, epoch),
            Some(floor) => OffsetAndEpoch::new(higher.base, floor.epoch),
        }
    }

    fn truncate(&mut self, keep: usize) {
        self.batches.truncate(keep);
        self.flushed = self.flushed.min(keep);
    }
}

proptest! {
    #[test]
    fn mem_log_matches_a_vector_of_batches(ops in prop::collection::vec(op(), 1..40)) {
        let mut log = MemLog::default();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Append { bump, count } => {
                    let end = model.end();
                    let epoch = end.epoch + bump;
                    let values: Vec<Vec<u8>> = (0..count).map(|i| vec![i as u8; 3]).collect();
                    let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
                    let batch = build_data_batch(end.offset, epoch, 0, &refs).unwrap();
                    log.append(&Bytes::from(batch));
                    model.batches.push(Batch { base: end.offset, next: end.offset + count as i64, epoch });
                }
                Op::Truncate { index } => {
                    let keep = index % (model.batches.len() + 1);
                    let offset = model.batches.get(keep).map_or(model.end().offset, |b| b.base);
                    log.truncate(offset);
                    model.truncate(keep);
                }
                Op::Flush => {
                    log.flush();
                    model.flushed = model.batches.len();
                }
                Op::Crash => {
                    log.crash();
                    let keep = model.flushed;
                    model.truncate(keep);
                }
            }
            prop_assert_eq!(log.end_offset(), model.end());
            let flushed_end = model.batches.get(model.flushed).map_or(model.end().offset, |b| b.base);
            prop_assert_eq!(log.flushed_end_offset(), flushed_end);
            let got: Vec<(i64, i32)> = log.batches().iter().map(|(o, e, _)| (*o, *e)).collect();
            let want: Vec<(i64, i32)> = model.batches.iter().map(|b| (b.base, b.epoch)).collect();
            prop_assert_eq!(got, want);
            for epoch in 0..=model.end().epoch + 1 {
                prop_assert_eq!(
                    log.end_offset_for_epoch(epoch),
                    model.end_offset_for_epoch(epoch),
                    "epoch {}", epoch
                );
            }
        }
    }
}
