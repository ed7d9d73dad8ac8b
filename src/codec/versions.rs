//! The tables of the APIs and version ranges this node advertises on its controller listener,
//! and the features it reports in ApiVersions and in its KIP-919 registration.
//!
//! A node presents itself as the controller of one Kafka release ([`Release`], the
//! `ferrokraft.kafka.release` key, 4.0 to 4.4): [`Release::advertised`] is that release's
//! table, built at compile time from the per-release columns of `apis::APIS`, and
//! [`Release::supported_features`] its feature ranges. Java peers pick
//! `min(their max, our max)` per API, so advertising a version means implementing it.
//! Requests are decoded against the widest table ([`advertised`]) whatever the release: the
//! release decides what the node shows, not what it understands.

use kafka_protocol::messages::ApiKey;

use super::apis::APIS;

pub use crate::common::release::Release;

/// One advertised API and its inclusive version range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRange {
    /// The API.
    pub api_key: ApiKey,
    /// Lowest version served.
    pub min_version: i16,
    /// Highest version served.
    pub max_version: i16,
}

impl ApiRange {
    /// Whether `version` is inside the range.
    pub fn contains(&self, version: i16) -> bool {
        (self.min_version..=self.max_version).contains(&version)
    }
}

const fn api(api_key: ApiKey, min_version: i16, max_version: i16) -> ApiRange {
    ApiRange {
        api_key,
        min_version,
        max_version,
    }
}

const fn count_in(release: Release) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < APIS.len() {
        if APIS[i].max_in(release).is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn table_of<const N: usize>(release: Release) -> [ApiRange; N] {
    let mut out = [api(ApiKey::Fetch, 0, 0); N];
    let (mut i, mut j) = (0, 0);
    while i < APIS.len() {
        let s = &APIS[i];
        if let Some(max) = s.max_in(release) {
            out[j] = api(s.api_key, s.min_version, max);
            j += 1;
        }
        i += 1;
    }
    out
}

const TABLE_4_0: [ApiRange; count_in(Release::Kafka4_0)] = table_of(Release::Kafka4_0);
const TABLE_4_1: [ApiRange; count_in(Release::Kafka4_1)] = table_of(Release::Kafka4_1);
const TABLE_4_2: [ApiRange; count_in(Release::Kafka4_2)] = table_of(Release::Kafka4_2);
const TABLE_4_3: [ApiRange; count_in(Release::Kafka4_3)] = table_of(Release::Kafka4_3);
const TABLE_4_4: [ApiRange; count_in(Release::Kafka4_4)] = table_of(Release::Kafka4_4);

/// Kafka 4.1.2's controller APIs, in ascending key order.
pub const ADVERTISED: &[ApiRange] = &TABLE_4_1;

/// The widest table: every API and version some release advertises. Requests are decoded
/// against it whatever the release presented.
const WIDEST: &[ApiRange] = &TABLE_4_4;

/// The range of `api_key` this node decodes and serves, whatever release it presents
/// (the widest table).
pub fn advertised(api_key: ApiKey) -> Option<ApiRange> {
    WIDEST.iter().copied().find(|r| r.api_key == api_key)
}

impl Release {
    /// The APIs advertised in ApiVersions, in ascending key order.
    pub fn advertised(self) -> &'static [ApiRange] {
        match self {
            Self::Kafka4_0 => &TABLE_4_0,
            Self::Kafka4_1 => &TABLE_4_1,
            Self::Kafka4_2 => &TABLE_4_2,
            Self::Kafka4_3 => &TABLE_4_3,
            Self::Kafka4_4 => &TABLE_4_4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advertised_ranges_are_within_what_the_codec_can_decode() {
        for r in WIDEST {
            let valid = r.api_key.valid_versions();
            assert!(
                r.min_version >= valid.min && r.max_version <= valid.max,
                "{:?} {}..{} outside crate range {}",
                r.api_key,
                r.min_version,
                r.max_version,
                valid
            );
        }
    }

    #[test]
    fn advertised_is_sorted_by_key_without_duplicates() {
        for release in Release::ALL {
            let keys: Vec<i16> = release
                .advertised()
                .iter()
                .map(|r| r.api_key as i16)
                .collect();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(keys, sorted);
        }
    }

    /// The decoding table must cover every release's: a node never advertises what it would
    /// refuse to decode.
    #[test]
    fn every_release_advertises_within_what_is_decoded() {
        for release in Release::ALL {
            for r in release.advertised() {
                let served = advertised(r.api_key).expect("advertised API is decoded");
                assert!(served.min_version <= r.min_version && r.max_version <= served.max_version);
            }
            let names: Vec<&str> = release
                .supported_features()
                .iter()
                .map(|f| f.name)
                .collect();
            let mut order: Vec<&str> = release.registration_order().to_vec();
            assert_eq!(order.len(), names.len());
            order.sort_unstable();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(
                order, sorted,
                "{release:?}: registration lists other features"
            );
        }
    }
}
