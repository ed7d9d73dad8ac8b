//! What writing a snapshot of a large image costs, and where: the copy of the image the raft
//! thread makes, and the encoding and writing the snapshot writer's thread does, either
//! streamed batch by batch (what the driver does) or collected first (what it did before).
//!
//! ```text
//! cargo run --release --example snapshot_cost -- 10000000 stream   # or `collect`, `encode`
//! ```
//!
//! The image holds `N` partitions in topics of 10 (the controller benchmark's shape), RF 3
//! over 1,000 brokers. Timings go to stderr with the process's peak RSS (VmHWM) after the
//! image is built and after the snapshot. Figures are recorded in docs/benchmarks.md.

use std::error::Error;
use std::time::Instant;

use ferrokraft::metadata::image::MetadataImage;
use ferrokraft::metadata::record::MetadataRecord as R;
use ferrokraft::metadata::records::{
    FeatureLevelRecord, PartitionRecord, RegisterBrokerRecord, TopicRecord,
};
use ferrokraft::server::driver::metadata::write_image;
use ferrokraft::snapshot::{SnapshotHeaderInfo, SnapshotId};
use uuid::Uuid;

const BROKERS: i32 = 1000;
const PARTITIONS_PER_TOPIC: usize = 10;

fn directory(broker: i32) -> Uuid {
    Uuid::from_u128(0xa000 + broker as u128)
}

fn image(partitions: usize) -> Result<MetadataImage, Box<dyn Error>> {
    let mut image = MetadataImage::new();
    image.replay(R::FeatureLevel(FeatureLevelRecord {
        name: "metadata.version".into(),
        feature_level: 27,
        ..Default::default()
    }))?;
    for broker_id in 0..BROKERS {
        image.replay(R::RegisterBroker(RegisterBrokerRecord {
            broker_id,
            broker_epoch: 10,
            incarnation_id: Uuid::from_u128(broker_id as u128 + 1),
            log_dirs: vec![directory(broker_id)],
            fenced: false,
            ..Default::default()
        }))?;
    }
    for topic in 0..partitions / PARTITIONS_PER_TOPIC {
        let topic_id = Uuid::from_u128(0x1_0000_0000 + topic as u128);
        image.replay(R::Topic(TopicRecord {
            name: format!("bench-topic-{topic}"),
            topic_id,
            ..Default::default()
        }))?;
        for partition_id in 0..PARTITIONS_PER_TOPIC {
            let first = ((topic * PARTITIONS_PER_TOPIC + partition_id) % BROKERS as usize) as i32;
            let replicas: Vec<i32> = (0..3).map(|i| (first + i) % BROKERS).collect();
            image.replay(R::Partition(PartitionRecord {
                partition_id: partition_id as i32,
                topic_id,
                isr: replicas.clone(),
                directories: replicas.iter().map(|b| directory(*b)).collect(),
                replicas,
                leader: first,
                ..Default::default()
            }))?;
        }
    }
    Ok(image)
}

fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(str::to_string)
        })
        .unwrap_or_default()
}

#[allow(clippy::disallowed_methods)] // a measurement reads the clock
fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let partitions: usize = args.next().map_or(Ok(1_000_000), |s| s.parse())?;
    let mode = args.next().unwrap_or_else(|| "stream".into());
    let t = Instant::now();
    let image = image(partitions)?;
    eprintln!(
        "image of {partitions} partitions built in {:?}; {}",
        t.elapsed(),
        peak_rss()
    );
    let t = Instant::now();
    let copy = image.clone();
    eprintln!("copy of the image (raft thread): {:?}", t.elapsed());
    let t = Instant::now();
    match mode.as_str() {
        "encode" => {
            let mut bytes = 0u64;
            copy.write_snapshot_records(&mut |value| {
                bytes += value.len() as u64;
                Ok(())
            })?;
            eprintln!("{bytes} bytes of records encoded in {:?}", t.elapsed());
        }
        "collect" => {
            let values = copy.snapshot_records()?;
            eprintln!("{} records collected in {:?}", values.len(), t.elapsed());
        }
        _ => {
            let dir = std::env::temp_dir().join(format!("snapshot-cost-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let id = SnapshotId {
                end_offset: 1,
                epoch: 1,
            };
            let header = SnapshotHeaderInfo {
                last_contained_log_timestamp_ms: 0,
                kraft_version: None,
                voters: None,
            };
            // The node's own writer: the records streamed into the file a batch at a time.
            let written = write_image(&dir, id, &header, &copy, 0)
                .and_then(|path| std::fs::metadata(path).map_err(|e| e.to_string()));
            std::fs::remove_dir_all(&dir)?;
            eprintln!(
                "{} bytes streamed to a file in {:?}",
                written?.len(),
                t.elapsed()
            );
        }
    }
    eprintln!("after the snapshot: {}", peak_rss());
    Ok(())
}
