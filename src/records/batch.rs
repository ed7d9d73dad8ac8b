//! Building KRaft v2 record batches byte for byte as Kafka's `BatchBuilder` /
//! `MemoryRecordsBuilder` write them, and restamping the two header fields that sit outside the
//! CRC.
//!
//! Header constants KRaft always writes: magic 2, no compression, CREATE_TIME,
//! producer id/epoch/sequence −1, base timestamp = max timestamp = the append time, every record
//! with timestampDelta 0 and zero headers.

use super::control::ControlRecord;
use super::varint::{put_varint, put_varlong, varint_size};
use super::RecordsError;

/// Byte position of the base offset (int64).
pub const BASE_OFFSET_OFFSET: usize = 0;
/// Byte position of the length field (int32, counts bytes after itself).
pub const LENGTH_OFFSET: usize = 8;
/// Byte position of the partition leader epoch (int32, outside the CRC).
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
/// Byte position of the magic byte.
pub const MAGIC_OFFSET: usize = 16;
/// Byte position of the CRC-32C (uint32).
pub const CRC_OFFSET: usize = 17;
/// Byte position of the attributes (int16); the CRC covers from here to the end.
pub const ATTRIBUTES_OFFSET: usize = 21;
/// Byte position of lastOffsetDelta (int32).
pub const LAST_OFFSET_DELTA_OFFSET: usize = 23;
/// Byte position of the base timestamp (int64).
pub const BASE_TIMESTAMP_OFFSET: usize = 27;
/// Byte position of the max timestamp (int64).
pub const MAX_TIMESTAMP_OFFSET: usize = 35;
/// Byte position of the producer id (int64).
pub const PRODUCER_ID_OFFSET: usize = 43;
/// Byte position of the producer epoch (int16).
pub const PRODUCER_EPOCH_OFFSET: usize = 51;
/// Byte position of the base sequence (int32).
pub const BASE_SEQUENCE_OFFSET: usize = 53;
/// Byte position of the record count (int32).
pub const RECORDS_COUNT_OFFSET: usize = 57;
/// Size of the batch header; records start here.
pub const RECORD_BATCH_OVERHEAD: usize = 61;
/// baseOffset + length: the bytes not counted by the length field.
pub const LOG_OVERHEAD: usize = 12;
/// The only magic KRaft reads or writes.
pub const MAGIC_V2: u8 = 2;
/// Attribute bit of a control batch.
pub const CONTROL_FLAG: u16 = 0x20;
/// Attribute bit of a transactional batch (never set by KRaft).
pub const TRANSACTIONAL_FLAG: u16 = 0x10;
/// Attribute bit of LogAppendTime (never set by KRaft).
pub const LOG_APPEND_TIME_FLAG: u16 = 0x08;
/// Kafka's `KafkaRaftClient.MAX_BATCH_SIZE_BYTES`: the largest batch KRaft builds (8 MiB).
pub const MAX_BATCH_SIZE_BYTES: usize = 8 * 1024 * 1024;

/// Builds one batch. Records are appended one by one; `finish` fills the length, count,
/// lastOffsetDelta and CRC.
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    buf: Vec<u8>,
    count: i32,
    control: bool,
}

impl BatchBuilder {
    /// Starts a batch. `append_timestamp_ms` becomes both base and max timestamp, as in Kafka
    /// where it is the time the batch was opened.
    pub fn new(
        base_offset: i64,
        partition_leader_epoch: i32,
        append_timestamp_ms: i64,
        control: bool,
    ) -> Self {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&base_offset.to_be_bytes());
        buf.extend_from_slice(&0i32.to_be_bytes()); // length, filled by finish
        buf.extend_from_slice(&partition_leader_epoch.to_be_bytes());
        buf.push(MAGIC_V2);
        buf.extend_from_slice(&0u32.to_be_bytes()); // crc, filled by finish
        let attributes: u16 = if control { CONTROL_FLAG } else { 0 };
        buf.extend_from_slice(&attributes.to_be_bytes());
        buf.extend_from_slice(&0i32.to_be_bytes()); // lastOffsetDelta
        buf.extend_from_slice(&append_timestamp_ms.to_be_bytes());
        buf.extend_from_slice(&append_timestamp_ms.to_be_bytes());
        buf.extend_from_slice(&(-1i64).to_be_bytes());
        buf.extend_from_slice(&(-1i16).to_be_bytes());
        buf.extend_from_slice(&(-1i32).to_be_bytes());
        buf.extend_from_slice(&0i32.to_be_bytes()); // count
        debug_assert_eq!(buf.len(), RECORD_BATCH_OVERHEAD);
        BatchBuilder {
            buf,
            count: 0,
            control,
        }
    }

    /// Whether this builds a control batch.
    pub fn is_control(&self) -> bool {
        self.control
    }

    /// Records appended so far.
    pub fn record_count(&self) -> usize {
        self.count as usize
    }

    /// Bytes the batch would have if finished now.
    pub fn size_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Bytes one more record with these key/value sizes would add (for batching decisions).
    pub fn record_size_bytes(&self, key_len: Option<usize>, value_len: usize) -> usize {
        record_encoded_size(self.count, key_len, value_len)
    }

    /// Appends one record: offset delta = records so far, timestampDelta 0, no headers.
    /// Data batches need a null key and a non-empty value; control batches a key and a value,
    /// which is what Kafka's KRaft reader accepts.
    pub fn append(&mut self, key: Option<&[u8]>, value: &[u8]) -> Result<(), RecordsError> {
        let index = self.count as usize;
        if value.is_empty() {
            return Err(RecordsError::InvalidRecord {
                index,
                reason: "empty value".into(),
            });
        }
        match (self.control, key) {
            (false, Some(_)) => {
                return Err(RecordsError::InvalidRecord {
                    index,
                    reason: "data records have a null key".into(),
                })
            }
            (true, None) => {
                return Err(RecordsError::InvalidRecord {
                    index,
                    reason: "control records need a key".into(),
                })
            }
            _ => {}
        }
        let key_len = key.map(<[u8]>::len);
        let size = self.buf.len() + record_encoded_size(self.count, key_len, value.len());
        if size > i32::MAX as usize {
            return Err(RecordsError::TooLarge { size_bytes: size });
        }
        let body = record_body_size(self.count, key_len, value.len());
        put_varint(&mut self.buf, body as i32);
        self.buf.push(0); // record attributes
        put_varlong(&mut self.buf, 0); // timestampDelta
        put_varint(&mut self.buf, self.count);
        match key {
            Some(k) => {
                put_varint(&mut self.buf, k.len() as i32);
                self.buf.extend_from_slice(k);
            }
            None => put_varint(&mut self.buf, -1),
        }
        put_varint(&mut self.buf, value.len() as i32);
        self.buf.extend_from_slice(value);
        put_varint(&mut self.buf, 0); // header count
        self.count += 1;
        Ok(())
    }

    /// Appends a control record (key = version 0 + type, value at serialization version 0).
    pub fn append_control(&mut self, record: &ControlRecord) -> Result<(), RecordsError> {
        let value = record.encode_value()?;
        self.append(Some(&record.key_bytes()), &value)
    }

    /// Finishes the batch: fills length, lastOffsetDelta, count and the CRC-32C.
    pub fn finish(mut self) -> Result<Vec<u8>, RecordsError> {
        if self.count == 0 {
            return Err(RecordsError::EmptyBatch);
        }
        let length = (self.buf.len() - LOG_OVERHEAD) as i32;
        self.buf[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&length.to_be_bytes());
        self.buf[LAST_OFFSET_DELTA_OFFSET..LAST_OFFSET_DELTA_OFFSET + 4]
            .copy_from_slice(&(self.count - 1).to_be_bytes());
        self.buf[RECORDS_COUNT_OFFSET..RECORDS_COUNT_OFFSET + 4]
            .copy_from_slice(&self.count.to_be_bytes());
        let crc = crc32c::crc32c(&self.buf[ATTRIBUTES_OFFSET..]);
        self.buf[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        Ok(self.buf)
    }
}

fn record_body_size(offset_delta: i32, key_len: Option<usize>, value_len: usize) -> usize {
    let key_part = match key_len {
        Some(k) => varint_size(k as i32) + k,
        None => 1,
    };
    // attributes + timestampDelta(0) + offsetDelta + key + value + header count
    1 + 1 + varint_size(offset_delta) + key_part + varint_size(value_len as i32) + value_len + 1
}

fn record_encoded_size(offset_delta: i32, key_len: Option<usize>, value_len: usize) -> usize {
    let body = record_body_size(offset_delta, key_len, value_len);
    varint_size(body as i32) + body
}

/// Builds one data batch of `values` (each a serialized metadata record).
pub fn build_data_batch(
    base_offset: i64,
    partition_leader_epoch: i32,
    append_timestamp_ms: i64,
    values: &[&[u8]],
) -> Result<Vec<u8>, RecordsError> {
    let mut b = BatchBuilder::new(
        base_offset,
        partition_leader_epoch,
        append_timestamp_ms,
        false,
    );
    for v in values {
        b.append(None, v)?;
    }
    b.finish()
}

/// Builds one control batch of `records`.
pub fn build_control_batch(
    base_offset: i64,
    partition_leader_epoch: i32,
    append_timestamp_ms: i64,
    records: &[ControlRecord],
) -> Result<Vec<u8>, RecordsError> {
    let mut b = BatchBuilder::new(
        base_offset,
        partition_leader_epoch,
        append_timestamp_ms,
        true,
    );
    for r in records {
        b.append_control(r)?;
    }
    b.finish()
}

fn check_header(batch: &[u8]) -> Result<(), RecordsError> {
    if batch.len() < RECORD_BATCH_OVERHEAD {
        return Err(RecordsError::Truncated {
            at: 0,
            needed: RECORD_BATCH_OVERHEAD,
            available: batch.len(),
        });
    }
    Ok(())
}

/// Overwrites the base offset (bytes 0..8; outside the CRC, so the batch stays valid).
pub fn restamp_base_offset(batch: &mut [u8], base_offset: i64) -> Result<(), RecordsError> {
    check_header(batch)?;
    batch[BASE_OFFSET_OFFSET..BASE_OFFSET_OFFSET + 8].copy_from_slice(&base_offset.to_be_bytes());
    Ok(())
}

/// Overwrites the partition leader epoch (bytes 12..16; outside the CRC).
pub fn restamp_partition_leader_epoch(batch: &mut [u8], epoch: i32) -> Result<(), RecordsError> {
    check_header(batch)?;
    batch[PARTITION_LEADER_EPOCH_OFFSET..PARTITION_LEADER_EPOCH_OFFSET + 4]
        .copy_from_slice(&epoch.to_be_bytes());
    Ok(())
}
