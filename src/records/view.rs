//! Zero-copy reading of one v2 batch, with the strictness of Kafka's KRaft reader
//! (`RecordsIterator.readRecord`): CRC-32C over [21..end), timestampDelta 0, null key on data
//! records, non-empty values, header count 0 as the record's last byte, exact record count.

use super::batch::*;
use super::control::{ControlRecord, ControlRecordType};
use super::varint::{get_varint, get_varlong};
use super::RecordsError;

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(a)
}
fn be_i32(b: &[u8], at: usize) -> i32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    i32::from_be_bytes(a)
}
fn be_u32(b: &[u8], at: usize) -> u32 {
    be_i32(b, at) as u32
}
fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

/// A borrowed, structurally checked batch: exactly one batch's bytes, at least the header size,
/// a length field that matches, and magic 2. The CRC is checked separately (`verify_crc`) so
/// tools can report a bad CRC without losing the batch boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchView<'a> {
    bytes: &'a [u8],
}

impl<'a> BatchView<'a> {
    /// Wraps `bytes`, which must be exactly one batch.
    pub fn new(bytes: &'a [u8]) -> Result<Self, RecordsError> {
        if bytes.len() < RECORD_BATCH_OVERHEAD {
            return Err(RecordsError::Truncated {
                at: 0,
                needed: RECORD_BATCH_OVERHEAD,
                available: bytes.len(),
            });
        }
        let length = be_i32(bytes, LENGTH_OFFSET);
        if length < 0 || length as usize + LOG_OVERHEAD != bytes.len() {
            return Err(RecordsError::CorruptBatch(format!(
                "length field {length} does not match {} bytes",
                bytes.len()
            )));
        }
        if bytes[MAGIC_OFFSET] != MAGIC_V2 {
            return Err(RecordsError::CorruptBatch(format!(
                "magic {} is not 2",
                bytes[MAGIC_OFFSET]
            )));
        }
        Ok(BatchView { bytes })
    }

    /// Wraps and checks the CRC too.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, RecordsError> {
        let v = Self::new(bytes)?;
        v.verify_crc()?;
        Ok(v)
    }

    /// The raw batch bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Total size of the batch in bytes.
    pub fn size_bytes(&self) -> usize {
        self.bytes.len()
    }
    /// First offset of the batch.
    pub fn base_offset(&self) -> i64 {
        be_i64(self.bytes, BASE_OFFSET_OFFSET)
    }
    /// baseOffset + lastOffsetDelta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .saturating_add(i64::from(self.last_offset_delta()))
    }
    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().saturating_add(1)
    }
    /// lastOffsetDelta as stored.
    pub fn last_offset_delta(&self) -> i32 {
        be_i32(self.bytes, LAST_OFFSET_DELTA_OFFSET)
    }
    /// The leader epoch stamped on the batch.
    pub fn partition_leader_epoch(&self) -> i32 {
        be_i32(self.bytes, PARTITION_LEADER_EPOCH_OFFSET)
    }
    /// Attributes as stored (Kafka only interprets the low byte).
    pub fn attributes(&self) -> u16 {
        be_i16(self.bytes, ATTRIBUTES_OFFSET) as u16
    }
    /// Whether the control bit is set.
    pub fn is_control(&self) -> bool {
        self.attributes() & CONTROL_FLAG != 0
    }
    /// Whether the transactional bit is set.
    pub fn is_transactional(&self) -> bool {
        self.attributes() & TRANSACTIONAL_FLAG != 0
    }
    /// Compression codec id (0 = none).
    pub fn compression(&self) -> u8 {
        (self.attributes() & 0x07) as u8
    }
    /// Base timestamp.
    pub fn base_timestamp(&self) -> i64 {
        be_i64(self.bytes, BASE_TIMESTAMP_OFFSET)
    }
    /// Max timestamp (what Kafka's time index and snapshot headers use).
    pub fn max_timestamp(&self) -> i64 {
        be_i64(self.bytes, MAX_TIMESTAMP_OFFSET)
    }
    /// Producer id (−1 in KRaft).
    pub fn producer_id(&self) -> i64 {
        be_i64(self.bytes, PRODUCER_ID_OFFSET)
    }
    /// Producer epoch (−1 in KRaft).
    pub fn producer_epoch(&self) -> i16 {
        be_i16(self.bytes, PRODUCER_EPOCH_OFFSET)
    }
    /// Base sequence (−1 in KRaft).
    pub fn base_sequence(&self) -> i32 {
        be_i32(self.bytes, BASE_SEQUENCE_OFFSET)
    }
    /// Declared record count.
    pub fn record_count(&self) -> i32 {
        be_i32(self.bytes, RECORDS_COUNT_OFFSET)
    }
    /// The stored CRC.
    pub fn stored_crc(&self) -> u32 {
        be_u32(self.bytes, CRC_OFFSET)
    }
    /// CRC-32C of bytes [21..end), as Kafka computes it.
    pub fn computed_crc(&self) -> u32 {
        crc32c::crc32c(&self.bytes[ATTRIBUTES_OFFSET..])
    }
    /// Checks the CRC.
    pub fn verify_crc(&self) -> Result<(), RecordsError> {
        let (stored, computed) = (self.stored_crc(), self.computed_crc());
        if stored != computed {
            return Err(RecordsError::CorruptBatch(format!(
                "crc mismatch: stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        Ok(())
    }

    /// Iterates the records with KRaft strictness. Each item is an error at the first bad
    /// record, after which iteration stops.
    pub fn records(&self) -> RecordIter<'a> {
        RecordIter {
            batch: *self,
            pos: RECORD_BATCH_OVERHEAD,
            index: 0,
            done: false,
        }
    }

    /// Checks CRC, the offsets header, and every record (what a follower checks before
    /// accepting replicated bytes).
    pub fn validate_kraft(&self) -> Result<(), RecordsError> {
        self.verify_crc()?;
        self.check_kraft_header()?;
        self.check_records()
    }

    /// Every record frames, and every control record decodes (the record walk of
    /// [`Self::validate_kraft`]; what Kafka's leader-side `LogValidator` checks).
    pub fn check_records(&self) -> Result<(), RecordsError> {
        for r in self.records() {
            let r = r?;
            if self.is_control() {
                r.control_record()?;
            }
        }
        Ok(())
    }

    /// The header checks of [`Self::validate_kraft`]: a record count, a last offset delta
    /// that matches it, a leader epoch. Recovery checks a batch this way once its CRC is
    /// good, as Kafka's `LogSegment.recover` checks only `ensureValid`: every batch in the
    /// log had its records checked when it was appended.
    pub fn check_kraft_header(&self) -> Result<(), RecordsError> {
        let count = self.record_count();
        if count < 1 {
            return Err(RecordsError::CorruptBatch(format!("record count {count}")));
        }
        if self.last_offset_delta() != count - 1 {
            return Err(RecordsError::CorruptBatch(format!(
                "lastOffsetDelta {} does not match {count} records",
                self.last_offset_delta()
            )));
        }
        if self.partition_leader_epoch() < 0 {
            return Err(RecordsError::CorruptBatch(format!(
                "partition leader epoch {}",
                self.partition_leader_epoch()
            )));
        }
        Ok(())
    }

    /// Decodes every record of a control batch.
    pub fn control_records(&self) -> Result<Vec<ControlRecord>, RecordsError> {
        if !self.is_control() {
            return Err(RecordsError::Control("not a control batch".into()));
        }
        self.records().map(|r| r?.control_record()).collect()
    }
}

/// One record inside a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    /// Absolute offset (base offset + offset delta).
    pub offset: i64,
    /// Key bytes; `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// Value bytes (non-empty; the KRaft reader rejects null or empty values).
    pub value: &'a [u8],
}

impl RecordView<'_> {
    /// Decodes this record as a control record.
    pub fn control_record(&self) -> Result<ControlRecord, RecordsError> {
        let key = self
            .key
            .ok_or_else(|| RecordsError::Control("control record without key".into()))?;
        ControlRecord::decode(key, self.value)
    }

    /// The control record type from the key, if the key is one.
    pub fn control_type(&self) -> Option<ControlRecordType> {
        self.key.and_then(|k| ControlRecordType::parse_key(k).ok())
    }
}

/// Iterator over the records of a batch.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    batch: BatchView<'a>,
    pos: usize,
    index: i32,
    done: bool,
}

impl<'a> RecordIter<'a> {
    fn bad(&mut self, reason: impl Into<String>) -> Option<Result<RecordView<'a>, RecordsError>> {
        self.done = true;
        Some(Err(RecordsError::InvalidRecord {
            index: self.index.max(0) as usize,
            reason: reason.into(),
        }))
    }

    fn read_one(&mut self) -> Result<RecordView<'a>, String> {
        let bytes = self.batch.bytes;
        let mut pos = self.pos;
        let size = get_varint(bytes, &mut pos).map_err(|e| e.to_string())?;
        if size <= 0 {
            return Err(format!("non-positive record size {size}"));
        }
        let size = size as usize;
        let end = pos
            .checked_add(size)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| format!("record size {size} runs past the batch end"))?;
        let body = &bytes[..end - 1]; // last byte is the header count
        if bytes[end - 1] != 0 {
            return Err(format!("header count byte {} is not 0", bytes[end - 1]));
        }
        pos += 1; // attributes
        if pos > body.len() {
            return Err("record too short".into());
        }
        let ts_delta = get_varlong(body, &mut pos).map_err(|e| e.to_string())?;
        if ts_delta != 0 {
            return Err(format!("timestamp delta {ts_delta} is not 0"));
        }
        let offset_delta = get_varint(body, &mut pos).map_err(|e| e.to_string())?;
        let key = read_bytes(body, &mut pos)?;
        let value = read_bytes(body, &mut pos)?;
        if pos != body.len() {
            return Err(format!(
                "record declares {size} bytes but its fields use {}",
                pos + 1 - self.pos
            ));
        }
        let control = self.batch.is_control();
        if !control && key.is_some() {
            return Err("data record with a key".into());
        }
        if control && key.is_none_or(<[u8]>::is_empty) {
            return Err("control record without a key".into());
        }
        let value = match value {
            Some(v) if !v.is_empty() => v,
            _ => return Err("missing or empty value".into()),
        };
        self.pos = end;
        Ok(RecordView {
            offset: self
                .batch
                .base_offset()
                .saturating_add(i64::from(offset_delta)),
            key,
            value,
        })
    }
}

fn read_bytes<'a>(body: &'a [u8], pos: &mut usize) -> Result<Option<&'a [u8]>, String> {
    let len = get_varint(body, pos).map_err(|e| e.to_string())?;
    if len < 0 {
        return Ok(None);
    }
    let end = pos
        .checked_add(len as usize)
        .filter(|&e| e <= body.len())
        .ok_or_else(|| format!("field of {len} bytes runs past the record"))?;
    let s = &body[*pos..end];
    *pos = end;
    Ok(Some(s))
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<RecordView<'a>, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let count = self.batch.record_count();
        if self.batch.compression() != 0 {
            return self.bad(format!(
                "compression codec {} (KRaft never compresses)",
                self.batch.compression()
            ));
        }
        if count < 0 {
            return self.bad(format!("negative record count {count}"));
        }
        if self.index >= count {
            self.done = true;
            if self.pos != self.batch.bytes.len() {
                return self.bad(format!(
                    "incorrect declared batch size: {} bytes remain after {count} records",
                    self.batch.bytes.len() - self.pos
                ));
            }
            return None;
        }
        if self.pos >= self.batch.bytes.len() {
            return self.bad(format!(
                "premature end of batch after {} of {count} records",
                self.index
            ));
        }
        match self.read_one() {
            Ok(r) => {
                self.index += 1;
                Some(Ok(r))
            }
            Err(reason) => self.bad(reason),
        }
    }
}
