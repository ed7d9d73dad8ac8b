//! What one log line costs through ferrokraft's subscriber, gathered and written in batches
//! as replay writes them (#41: each controller logs a line per replayed PartitionRecord):
//!
//! ```text
//! cargo run --release --example log_line_cost 2>/dev/null
//! ```
//!
//! The line has the shape and length of replay's "Replayed PartitionRecord for new partition
//! …" line: the same count of formatted numbers, ids and names.

use std::fmt;
use std::time::Instant;

use ferrokraft::common::uuid::KafkaUuid;
use uuid::Uuid;

/// Lines written, in batches of [`BATCH`].
const LINES: u32 = 1_000_000;
const BATCH: u32 = 1_000;

/// A registration-shaped value: as many pieces as replay's line formats.
struct Shaped(u32);

impl fmt::Display for Shaped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids = [self.0 % 7, self.0 % 11, self.0 % 13];
        let list = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            f.write_str("[")?;
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{id}")?;
            }
            f.write_str("]")
        };
        f.write_str("PartitionRegistration(replicas=")?;
        list(f)?;
        f.write_str(", directories=[")?;
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            // A broker's directory: each broker has one, the same id in every line.
            write!(
                f,
                "{}",
                KafkaUuid(&Uuid::from_u128(u128::from(*id) << 64 | 7))
            )?;
        }
        f.write_str("], isr=")?;
        list(f)?;
        write!(
            f,
            ", removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader={}, \
             leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0)",
            ids[0]
        )
    }
}

#[allow(clippy::disallowed_methods)] // a measurement reads the clock
fn main() {
    ferrokraft::logging::init(None);
    let started = Instant::now();
    for round in 0..LINES / BATCH {
        ferrokraft::logging::batched(|| {
            for p in 0..BATCH {
                let registration = Shaped(round * BATCH + p);
                let topic_id = Uuid::from_u128(u128::from(round) * 0x9e37_79b9_7f4a_7c15);
                let topic_id = KafkaUuid(&topic_id);
                tracing::info!(
                    "Replayed PartitionRecord for new partition bench-{round}-{p} with topic ID \
                     {topic_id} and {registration}."
                );
            }
        });
    }
    let elapsed = started.elapsed();
    println!(
        "{LINES} lines in {:.3} s: {:.0} ns a line",
        elapsed.as_secs_f64(),
        elapsed.as_nanos() as f64 / f64::from(LINES)
    );
}
