//! Kafka's framing: a 4-byte big-endian size, then that many bytes.
//!
//! Check, then parse: [`check_frame`] looks at the bytes buffered so far and says whether a
//! whole frame is there, so that partial input simply waits for more bytes. The size is checked
//! against `socket.request.max.bytes` before anything is allocated for the body, as Kafka's
//! `NetworkReceive` does.

use super::error::CodecError;

/// Bytes taken by the size prefix.
pub const SIZE_PREFIX_BYTES: usize = 4;

/// Kafka's default `socket.request.max.bytes` (100 MiB).
pub const DEFAULT_REQUEST_MAX_BYTES: usize = 104_857_600;

/// The outcome of looking at buffered input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameCheck {
    /// Not enough bytes yet; `buffered_needed` is the total the buffer must hold
    /// (known once the size prefix has arrived).
    Incomplete {
        /// Total bytes (prefix included) needed, if the prefix is there already.
        buffered_needed: Option<usize>,
    },
    /// A whole frame: the body is `buf[4..4 + body_len]`.
    Complete {
        /// Length of the body after the prefix.
        body_len: usize,
    },
}

/// Looks at the start of `buf` for one frame whose body may be at most `max_bytes` long.
pub fn check_frame(buf: &[u8], max_bytes: usize) -> Result<FrameCheck, CodecError> {
    let Some(prefix) = buf.get(..SIZE_PREFIX_BYTES) else {
        return Ok(FrameCheck::Incomplete {
            buffered_needed: None,
        });
    };
    let size = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
    if size < 0 {
        return Err(CodecError::NegativeSize { size });
    }
    let body_len = size as usize;
    if body_len > max_bytes {
        return Err(CodecError::FrameTooLarge { size, max_bytes });
    }
    if buf.len() < SIZE_PREFIX_BYTES + body_len {
        return Ok(FrameCheck::Incomplete {
            buffered_needed: Some(SIZE_PREFIX_BYTES + body_len),
        });
    }
    Ok(FrameCheck::Complete { body_len })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_prefix_waits() {
        assert_eq!(
            check_frame(&[0, 0], 10).ok(),
            Some(FrameCheck::Incomplete {
                buffered_needed: None
            })
        );
    }

    #[test]
    fn partial_body_waits_with_the_total_needed() {
        assert_eq!(
            check_frame(&[0, 0, 0, 5, 1, 2], 10).ok(),
            Some(FrameCheck::Incomplete {
                buffered_needed: Some(9)
            })
        );
    }

    #[test]
    fn complete_frame_reports_body_len() {
        assert_eq!(
            check_frame(&[0, 0, 0, 2, 7, 7, 9], 10).ok(),
            Some(FrameCheck::Complete { body_len: 2 })
        );
    }

    #[test]
    fn zero_size_is_a_complete_empty_frame() {
        assert_eq!(
            check_frame(&[0, 0, 0, 0], 10).ok(),
            Some(FrameCheck::Complete { body_len: 0 })
        );
    }

    #[test]
    fn oversized_and_negative_sizes_are_refused_before_the_body_arrives() {
        assert!(matches!(
            check_frame(&[0, 0, 0, 11], 10),
            Err(CodecError::FrameTooLarge { size: 11, .. })
        ));
        assert!(matches!(
            check_frame(&[0xff, 0xff, 0xff, 0xfe], 10),
            Err(CodecError::NegativeSize { size: -2 })
        ));
    }
}
