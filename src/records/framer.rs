//! Splitting a byte buffer or a file region into batches, and saying how it ends.
//!
//! The framer reads the 12-byte prefix (base offset, length), checks the length is possible,
//! slices the batch, checks magic and CRC, and hands out a `BatchView`. When it stops, `end()`
//! tells apart a clean end, a torn tail (the last batch is incomplete: a crash mid-write) and
//! corruption (a batch that can never be valid), with the byte position where good data ends.

use std::fs::File;
use std::os::unix::fs::FileExt;

use super::batch::{
    ATTRIBUTES_OFFSET, CONTROL_FLAG, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET,
    MAGIC_V2, RECORD_BATCH_OVERHEAD,
};
use super::view::BatchView;

/// How a run of batches ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameEnd {
    /// Every byte belonged to a complete, valid batch.
    Clean,
    /// The last batch is incomplete; good data ends at `position`.
    TornTail {
        /// Where the incomplete batch starts.
        position: u64,
        /// Bytes of it that are present.
        available_bytes: u64,
    },
    /// A batch at `position` can never be valid.
    Corrupt {
        /// Where the bad batch starts.
        position: u64,
        /// Why it is bad.
        reason: String,
    },
}

impl FrameEnd {
    /// Position where valid data ends, or `None` for a clean end.
    pub fn cut_position(&self) -> Option<u64> {
        match self {
            FrameEnd::Clean => None,
            FrameEnd::TornTail { position, .. } | FrameEnd::Corrupt { position, .. } => {
                Some(*position)
            }
        }
    }
}

/// Classifies the 12-byte prefix at `position` given `remaining` bytes from there.
/// Returns the batch size, or how the framing ends.
fn classify_prefix(
    prefix: &[u8],
    position: u64,
    remaining: u64,
    max_batch_bytes: usize,
) -> Result<usize, FrameEnd> {
    if remaining == 0 {
        return Err(FrameEnd::Clean);
    }
    if remaining < LOG_OVERHEAD as u64 {
        return Err(FrameEnd::TornTail {
            position,
            available_bytes: remaining,
        });
    }
    let length = i32::from_be_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]);
    let min_length = (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32;
    if length < min_length || length as usize > max_batch_bytes - LOG_OVERHEAD {
        return Err(FrameEnd::Corrupt {
            position,
            reason: format!(
                "impossible batch length {length} (must be {min_length}..={})",
                max_batch_bytes - LOG_OVERHEAD
            ),
        });
    }
    let size = length as usize + LOG_OVERHEAD;
    if size as u64 > remaining {
        return Err(FrameEnd::TornTail {
            position,
            available_bytes: remaining,
        });
    }
    Ok(size)
}

fn check_magic(bytes: &[u8], position: u64) -> Result<(), FrameEnd> {
    if bytes[MAGIC_OFFSET] != MAGIC_V2 {
        return Err(FrameEnd::Corrupt {
            position,
            reason: format!("magic {} is not 2", bytes[MAGIC_OFFSET]),
        });
    }
    Ok(())
}

fn check_batch(bytes: &[u8], position: u64) -> Result<(), FrameEnd> {
    check_magic(bytes, position)?;
    match BatchView::new_checked(bytes) {
        Ok(_) => Ok(()),
        Err(e) => Err(FrameEnd::Corrupt {
            position,
            reason: e.to_string(),
        }),
    }
}

/// Iterates the batches of an in-memory buffer. `base_position` is added to every reported
/// position (e.g. the buffer's offset inside a file).
#[derive(Debug, Clone)]
pub struct BatchFramer<'a> {
    buf: &'a [u8],
    pos: usize,
    base_position: u64,
    max_batch_bytes: usize,
    end: Option<FrameEnd>,
    /// False for bytes this process has already checked (`trusted`).
    verify_crc: bool,
}

impl<'a> BatchFramer<'a> {
    /// Frames `buf`, accepting batches up to `max_batch_bytes` in size.
    pub fn new(buf: &'a [u8], base_position: u64, max_batch_bytes: usize) -> Self {
        BatchFramer {
            buf,
            pos: 0,
            base_position,
            max_batch_bytes: max_batch_bytes.max(RECORD_BATCH_OVERHEAD),
            end: None,
            verify_crc: true,
        }
    }

    /// Frames batches that were framed and CRC-checked once already (built here, or read
    /// back through a checking framer): lengths and magic are still checked, the CRC is
    /// not computed again. A follower walks each fetched 8 MiB several times (voter
    /// changes, record counts); one CRC pass over it is enough.
    pub fn trusted(buf: &'a [u8]) -> Self {
        BatchFramer {
            verify_crc: false,
            ..BatchFramer::new(buf, 0, usize::MAX)
        }
    }

    /// How framing ended; `None` until the iterator has returned `None`.
    pub fn end(&self) -> Option<&FrameEnd> {
        self.end.as_ref()
    }

    /// Bytes of `buf` consumed by good batches so far.
    pub fn valid_bytes(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for BatchFramer<'a> {
    /// Position (with `base_position`) and the batch.
    type Item = (u64, BatchView<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.end.is_some() {
            return None;
        }
        let position = self.base_position + self.pos as u64;
        let rest = &self.buf[self.pos..];
        let size = match classify_prefix(rest, position, rest.len() as u64, self.max_batch_bytes) {
            Ok(s) => s,
            Err(end) => {
                self.end = Some(end);
                return None;
            }
        };
        let bytes = &rest[..size];
        let checked = if self.verify_crc {
            check_batch(bytes, position)
        } else {
            check_magic(bytes, position)
        };
        if let Err(end) = checked {
            self.end = Some(end);
            return None;
        }
        self.pos += size;
        BatchView::new(bytes).ok().map(|v| (position, v))
    }
}

/// Where a batch sits in a file and which offsets it holds ([`FileFramer::next_header`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// Position of the batch in the file.
    pub position: u64,
    /// Size of the whole batch.
    pub size_bytes: usize,
    /// First offset.
    pub base_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// A control batch (attributes bit 5).
    pub is_control: bool,
}

/// Iterates the batches of a file region `[start, end)`, reading one batch at a time.
#[derive(Debug)]
pub struct FileFramer<'f> {
    file: &'f File,
    pos: u64,
    end_position: u64,
    max_batch_bytes: usize,
    end: Option<FrameEnd>,
}

impl<'f> FileFramer<'f> {
    /// Frames `file` from `start` to `end_position` (usually the file length).
    pub fn new(file: &'f File, start: u64, end_position: u64, max_batch_bytes: usize) -> Self {
        FileFramer {
            file,
            pos: start,
            end_position,
            max_batch_bytes: max_batch_bytes.max(RECORD_BATCH_OVERHEAD),
            end: None,
        }
    }

    /// How framing ended; `None` until the iterator has returned `None`.
    pub fn end(&self) -> Option<&FrameEnd> {
        self.end.as_ref()
    }

    /// Position after the last good batch.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The next batch's position, size, offsets and kind, reading only its first 27 bytes: a
    /// batch is located without reading (or CRC-checking) its body, as Kafka's
    /// `FileLogInputStream` does. Length and magic are checked; framing problems end the
    /// iteration and are reported by `end()`.
    pub fn next_header(&mut self) -> std::io::Result<Option<BatchHeader>> {
        if self.end.is_some() {
            return Ok(None);
        }
        let remaining = self.end_position.saturating_sub(self.pos);
        let mut head = [0u8; LAST_OFFSET_DELTA_OFFSET + 4];
        if remaining >= head.len() as u64 {
            self.file.read_exact_at(&mut head, self.pos)?;
        } else if remaining >= LOG_OVERHEAD as u64 {
            self.file
                .read_exact_at(&mut head[..LOG_OVERHEAD], self.pos)?;
        }
        let size = classify_prefix(&head, self.pos, remaining, self.max_batch_bytes)
            .and_then(|size| check_magic(&head, self.pos).map(|()| size));
        let size = match size {
            Ok(s) => s,
            Err(end) => {
                self.end = Some(end);
                return Ok(None);
            }
        };
        let base_offset = i64::from_be_bytes(head[..8].try_into().unwrap_or_default());
        let delta_at = LAST_OFFSET_DELTA_OFFSET;
        let delta = i32::from_be_bytes(head[delta_at..delta_at + 4].try_into().unwrap_or_default());
        let attributes = u16::from_be_bytes([head[ATTRIBUTES_OFFSET], head[ATTRIBUTES_OFFSET + 1]]);
        let header = BatchHeader {
            position: self.pos,
            size_bytes: size,
            base_offset,
            last_offset: base_offset + i64::from(delta),
            is_control: attributes & CONTROL_FLAG != 0,
        };
        self.pos += size as u64;
        Ok(Some(header))
    }

    /// The next batch as (position, owned bytes). I/O errors are returned as errors; framing
    /// problems end the iteration and are reported by `end()`.
    pub fn next_batch(&mut self) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        let mut bytes = Vec::new();
        Ok(self.next_batch_into(&mut bytes)?.map(|(at, size)| {
            bytes.truncate(size);
            (at, bytes)
        }))
    }

    /// As [`FileFramer::next_batch`], reading into `buf` (grown when needed, never shrunk):
    /// returns the batch's position and size, the batch being `buf[..size]`. Recovery reads a
    /// whole log this way; a fresh zeroed buffer per batch cost a memset and page faults for
    /// every byte read.
    pub fn next_batch_into(&mut self, buf: &mut Vec<u8>) -> std::io::Result<Option<(u64, usize)>> {
        if self.end.is_some() {
            return Ok(None);
        }
        let remaining = self.end_position.saturating_sub(self.pos);
        let mut prefix = [0u8; LOG_OVERHEAD];
        if remaining >= LOG_OVERHEAD as u64 {
            self.file.read_exact_at(&mut prefix, self.pos)?;
        }
        let size = match classify_prefix(&prefix, self.pos, remaining, self.max_batch_bytes) {
            Ok(s) => s,
            Err(end) => {
                self.end = Some(end);
                return Ok(None);
            }
        };
        if buf.len() < size {
            buf.resize(size, 0);
        }
        let bytes = &mut buf[..size];
        self.file.read_exact_at(bytes, self.pos)?;
        if let Err(end) = check_batch(bytes, self.pos) {
            self.end = Some(end);
            return Ok(None);
        }
        let at = self.pos;
        self.pos += size as u64;
        Ok(Some((at, size)))
    }
}
