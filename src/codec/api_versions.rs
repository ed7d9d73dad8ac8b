//! The ApiVersions answer, built from the advertised table.

pub use crate::common::errors::{INVALID_REQUEST, UNSUPPORTED_VERSION};
use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::protocol::StrBytes;

use super::versions::Release;

/// A finalized feature level, as the committed metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedFeature {
    /// Feature name.
    pub name: String,
    /// Finalized level.
    pub level: i16,
}

fn api_version(r: &super::versions::ApiRange) -> ApiVersion {
    ApiVersion::default()
        .with_api_key(r.api_key as i16)
        .with_min_version(r.min_version)
        .with_max_version(r.max_version)
}

/// Builds the ApiVersions response of a node presenting `release` for a request at
/// `request_version`.
///
/// Features whose minimum is 0 are left out below v4: older clients treat min 0 as invalid
/// (KAFKA-17492), so Kafka omits them; `kraft.version` (0..1) is therefore visible only at v4.
pub fn api_versions_response(
    release: Release,
    request_version: i16,
    finalized: &[FinalizedFeature],
    finalized_epoch: i64,
) -> ApiVersionsResponse {
    let api_keys = release.advertised().iter().map(api_version).collect();
    let supported_features = release
        .supported_features()
        .iter()
        .filter(|f| request_version >= 4 || f.min_version != 0)
        .map(|f| {
            SupportedFeatureKey::default()
                .with_name(StrBytes::from_static_str(f.name))
                .with_min_version(f.min_version)
                .with_max_version(f.max_version)
        })
        .collect();
    // Kafka never lists a feature finalized at level 0 (`createFinalizedFeatureKeys`).
    let finalized_features = finalized
        .iter()
        .filter(|f| f.level != 0)
        .map(|f| {
            FinalizedFeatureKey::default()
                .with_name(StrBytes::from_string(f.name.clone()))
                .with_min_version_level(f.level)
                .with_max_version_level(f.level)
        })
        .collect();
    ApiVersionsResponse::default()
        .with_error_code(0)
        .with_api_keys(api_keys)
        .with_supported_features(supported_features)
        .with_finalized_features_epoch(finalized_epoch)
        .with_finalized_features(finalized_features)
}

/// The answer to an ApiVersions request at a version `release` does not know:
/// UNSUPPORTED_VERSION listing ApiVersions' own range (KIP-511, Kafka's `getErrorResponse`),
/// to be encoded at v0 so any client can read it and retry.
pub fn unsupported_version_response(release: Release) -> ApiVersionsResponse {
    let api_keys = release
        .advertised()
        .iter()
        .filter(|r| r.api_key == kafka_protocol::messages::ApiKey::ApiVersions)
        .map(api_version)
        .collect();
    ApiVersionsResponse::default()
        .with_error_code(UNSUPPORTED_VERSION)
        .with_api_keys(api_keys)
}

/// Kafka's `ApiVersionsRequest.isValid`: from v3 the client software name and version match
/// `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`; from v5 (KIP-1242) a cluster id and a node id
/// come together or not at all. An invalid request is answered with INVALID_REQUEST and no
/// APIs.
pub fn is_valid_request(req: &ApiVersionsRequest, version: i16) -> bool {
    if version >= 5 && (req.cluster_id.is_none() != (req.node_id == -1)) {
        return false;
    }
    if version < 3 {
        return true;
    }
    let name_ok = |s: &str| {
        let b = s.as_bytes();
        let alnum = |c: &u8| c.is_ascii_alphanumeric();
        match (b.first(), b.last()) {
            (Some(first), Some(last)) => {
                alnum(first)
                    && alnum(last)
                    && b.iter().all(|c| alnum(c) || *c == b'-' || *c == b'.')
            }
            _ => false,
        }
    };
    name_ok(&req.client_software_name) && name_ok(&req.client_software_version)
}

/// The answer to an invalid ApiVersions request ([`is_valid_request`]).
pub fn invalid_request_response() -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_error_code(INVALID_REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str, version: &str) -> ApiVersionsRequest {
        ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_string(name.to_string()))
            .with_client_software_version(StrBytes::from_string(version.to_string()))
    }

    /// Kafka's `ApiVersionsRequest.isValid`: the software name and version pattern, and 4.4's
    /// cluster/node id pairing.
    #[test]
    fn test_is_valid() {
        for (name, ok) in [
            ("apache-kafka-java", true),
            ("4.1.2", true),
            ("a", true),
            ("", false),
            ("-kafka", false),
            ("kafka.", false),
            ("kafka java", false),
            ("kafka_java", false),
        ] {
            assert_eq!(is_valid_request(&req(name, "1.0"), 3), ok, "{name:?}");
            assert_eq!(is_valid_request(&req("kafka", name), 3), ok, "{name:?}");
            assert!(
                is_valid_request(&req(name, name), 2),
                "not checked below v3"
            );
        }
        let base = req("kafka", "4.4.0");
        assert!(is_valid_request(&base, 5));
        let mut cluster_only = base.clone();
        cluster_only.cluster_id = Some(StrBytes::from_static_str("abc"));
        assert!(!is_valid_request(&cluster_only, 5));
        assert!(is_valid_request(&cluster_only, 4), "ignored below v5");
        let mut node_only = base.clone();
        node_only.node_id = 3;
        assert!(!is_valid_request(&node_only, 5));
        let mut both = cluster_only;
        both.node_id = 3;
        assert!(is_valid_request(&both, 5));
    }

    /// KIP-511: an unknown version is answered with ApiVersions' own range only.
    #[test]
    fn unsupported_version_lists_api_versions_only() {
        for (release, max) in [(Release::Kafka4_1, 4), (Release::Kafka4_4, 5)] {
            let r = unsupported_version_response(release);
            assert_eq!(r.error_code, UNSUPPORTED_VERSION);
            assert_eq!(r.api_keys.len(), 1);
            assert_eq!(
                (r.api_keys[0].api_key, r.api_keys[0].max_version),
                (18, max)
            );
        }
    }
}
