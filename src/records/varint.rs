//! Varints as Kafka's `ByteUtils` writes them: zig-zag signed varint/varlong inside records,
//! unsigned varints in flexible message framing. Readers never read past the slice and reject
//! encodings longer than Kafka accepts (5 bytes for 32-bit, 10 for 64-bit).

use super::RecordsError;

/// Appends a zig-zag encoded 32-bit varint.
pub fn put_varint(out: &mut Vec<u8>, value: i32) {
    put_uvarint64(out, u64::from(((value << 1) ^ (value >> 31)) as u32));
}

/// Appends a zig-zag encoded 64-bit varlong.
pub fn put_varlong(out: &mut Vec<u8>, value: i64) {
    put_uvarint64(out, ((value << 1) ^ (value >> 63)) as u64);
}

/// Appends an unsigned LEB128 varint.
pub fn put_uvarint(out: &mut Vec<u8>, value: u32) {
    put_uvarint64(out, u64::from(value));
}

fn put_uvarint64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Size in bytes of a zig-zag varint.
pub fn varint_size(value: i32) -> usize {
    uvarint_size(((value << 1) ^ (value >> 31)) as u32)
}

/// Size in bytes of an unsigned varint.
pub fn uvarint_size(mut value: u32) -> usize {
    let mut n = 1;
    while value >= 0x80 {
        value >>= 7;
        n += 1;
    }
    n
}

fn get_uvarint64(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Result<u64, RecordsError> {
    let mut value: u64 = 0;
    for i in 0..max_bytes {
        let Some(&b) = buf.get(*pos) else {
            return Err(RecordsError::Truncated {
                at: *pos,
                needed: 1,
                available: 0,
            });
        };
        *pos += 1;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(RecordsError::CorruptBatch(format!(
        "varint longer than {max_bytes} bytes at {}",
        *pos
    )))
}

/// Reads an unsigned varint (at most 5 bytes) at `*pos`, advancing it.
pub fn get_uvarint(buf: &[u8], pos: &mut usize) -> Result<u32, RecordsError> {
    let v = get_uvarint64(buf, pos, 5)?;
    u32::try_from(v).map_err(|_| RecordsError::CorruptBatch(format!("uvarint {v} overflows")))
}

/// Reads a zig-zag varint (at most 5 bytes) at `*pos`, advancing it.
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Result<i32, RecordsError> {
    let raw = get_uvarint(buf, pos)?;
    Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
}

/// Reads a zig-zag varlong (at most 10 bytes) at `*pos`, advancing it.
pub fn get_varlong(buf: &[u8], pos: &mut usize) -> Result<i64, RecordsError> {
    let raw = get_uvarint64(buf, pos, 10)?;
    Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_encodings() {
        let mut v = Vec::new();
        put_varint(&mut v, -1);
        put_varint(&mut v, 21);
        put_varint(&mut v, 300);
        assert_eq!(v, vec![0x01, 0x2a, 0xd8, 0x04]);
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let buf = [0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(get_varint(&buf, &mut 0).is_err());
    }

    proptest! {
        #[test]
        fn varint_round_trip(x in any::<i32>()) {
            let mut v = Vec::new();
            put_varint(&mut v, x);
            prop_assert_eq!(v.len(), varint_size(x));
            let mut pos = 0;
            prop_assert_eq!(get_varint(&v, &mut pos).unwrap(), x);
            prop_assert_eq!(pos, v.len());
        }

        #[test]
        fn varlong_round_trip(x in any::<i64>()) {
            let mut v = Vec::new();
            put_varlong(&mut v, x);
            let mut pos = 0;
            prop_assert_eq!(get_varlong(&v, &mut pos).unwrap(), x);
        }
    }
}
