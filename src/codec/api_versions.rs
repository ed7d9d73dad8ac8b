//! The ApiVersions answer, built from the advertised table.

use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::ApiVersionsResponse;
use kafka_protocol::protocol::StrBytes;

use super::versions::Release;

/// Kafka's error code UNSUPPORTED_VERSION.
pub const UNSUPPORTED_VERSION: i16 = 35;

/// A finalized feature level, as the committed metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedFeature {
    /// Feature name.
    pub name: String,
    /// Finalized level.
    pub level: i16,
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
    let api_keys = release
        .advertised()
        .iter()
        .map(|r| {
            ApiVersion::default()
                .with_api_key(r.api_key as i16)
                .with_min_version(r.min_version)
                .with_max_version(r.max_version)
        })
        .collect();
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

/// The answer to an ApiVersions request at a version we do not know: UNSUPPORTED_VERSION with
/// our API list, to be encoded at v0 so any client can read it and retry.
pub fn unsupported_version_response(release: Release) -> ApiVersionsResponse {
    api_versions_response(release, 0, &[], -1).with_error_code(UNSUPPORTED_VERSION)
}
