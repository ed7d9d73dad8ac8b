//! Frames found by fuzzing the listener (#19), kept as regression inputs for the unit tests,
//! the integration tests and the fuzzer: legal frames of many minimal array elements, which
//! would decode to tens of times their size without the decode budget
//! (`super::request::decode_budget_bytes`). Each is a frame body without its size prefix, with
//! request header v2 (v1 for Fetch v4) and client id `fuzz`.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::ApiKey;

fn header(api_key: ApiKey, version: i16, capacity: usize) -> BytesMut {
    let mut b = BytesMut::with_capacity(capacity + 16);
    b.put_i16(api_key as i16);
    b.put_i16(version);
    b.put_i32(1);
    b.put_i16(4);
    b.put_slice(b"fuzz");
    if api_key.request_header_version(version) >= 2 {
        b.put_u8(0);
    }
    b
}

fn put_uvarint(b: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        b.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    b.put_u8(v as u8);
}

fn repeated(b: &mut BytesMut, element: &[u8], n: usize) {
    for _ in 0..n {
        b.put_slice(element);
    }
}

/// DescribeQuorum v0: `n` topics with an empty name, no partitions, no tags (3 bytes each).
pub fn describe_quorum_minimal_topics(n: usize) -> Bytes {
    let mut b = header(ApiKey::DescribeQuorum, 0, 3 * n + 8);
    put_uvarint(&mut b, n as u64 + 1);
    repeated(&mut b, &[1, 1, 0], n);
    b.put_u8(0);
    b.freeze()
}

/// DescribeQuorum v0: one topic whose tag section holds `n` empty unknown tags.
pub fn describe_quorum_unknown_tags(n: usize) -> Bytes {
    let mut b = header(ApiKey::DescribeQuorum, 0, 4 * n + 8);
    put_uvarint(&mut b, 2);
    b.put_slice(&[1, 1]);
    put_uvarint(&mut b, n as u64);
    for tag in 0..n as u64 {
        put_uvarint(&mut b, tag + 100);
        b.put_u8(0);
    }
    b.put_u8(0);
    b.freeze()
}

/// Fetch v4: `n` topics with an empty name and no partitions (6 bytes each).
pub fn fetch_minimal_topics(n: usize) -> Bytes {
    let mut b = header(ApiKey::Fetch, 4, 6 * n + 24);
    b.put_i32(-1); // replica id
    b.put_i32(0); // max wait
    b.put_i32(0); // min bytes
    b.put_i32(0); // max bytes
    b.put_i8(0); // isolation level
    b.put_u32(n as u32);
    repeated(&mut b, &[0; 6], n);
    b.freeze()
}

/// Vote v0: a null cluster id, then `n` topics with an empty name, each with one partition of
/// zeros (28 bytes each).
pub fn vote_minimal_topics(n: usize) -> Bytes {
    let mut b = header(ApiKey::Vote, 0, 28 * n + 8);
    b.put_u8(0); // null cluster id
    put_uvarint(&mut b, n as u64 + 1);
    let mut topic = vec![1, 2]; // empty name, one partition
    topic.extend_from_slice(&[0; 24]); // index, candidate epoch and id, last epoch, last offset
    topic.extend_from_slice(&[0, 0]); // partition tags, topic tags
    repeated(&mut b, &topic, n);
    b.put_u8(0);
    b.freeze()
}
