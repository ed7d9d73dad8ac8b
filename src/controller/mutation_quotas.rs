//! Controller mutation quotas (KIP-599; Kafka's `ControllerMutationQuotaManager` over its
//! `ClientQuotaManager`): CreateTopics, CreatePartitions and DeleteTopics spend one token per
//! partition created or deleted from a token bucket per user and client id, refilled at the
//! `controller_mutation_rate` client quota (partitions per second) and holding at most
//! `controller.quota.window.num` × `controller.quota.window.size.seconds` seconds of it.
//!
//! ```text
//!   request (user, client id) ─ no controller_mutation_rate quota in the image? ─▶ unbounded
//!     └ bucket of the entity the quota is set for (Kafka's quotaMetricTags ladder):
//!        strict (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+):
//!           tokens < 0 before a topic ─▶ that topic THROTTLING_QUOTA_EXCEEDED, else spend
//!        permissive (older versions): spend; tokens < 0 after ─▶ only a throttle time
//!     ─▶ the answer's throttle_time_ms: the time for the bucket to refill to zero
//! ```
//!
//! The buckets are soft state on the node, as Kafka's sensors are: a bucket unused for an
//! hour is dropped (Kafka's sensor expiry) and the next request of its entity starts full.
//! The quotas are read from the committed image (Kafka's quota publisher applies committed
//! records). Kafka also mutes a throttled client's connection for the throttle time; ferrokraft
//! answers with the throttle time only, which Kafka's clients honour themselves (KIP-219).

use std::collections::BTreeMap;

use super::errors::{self, ApiError};
use crate::metadata::image::MetadataImage;

/// The client quota key this manager enforces.
pub const CONTROLLER_MUTATION_RATE: &str = "controller_mutation_rate";

/// Kafka's `InactiveSensorExpirationTimeSeconds`, in ms.
const INACTIVE_EXPIRY_MS: u64 = 3_600_000;

/// How often idle buckets are looked for.
const PURGE_INTERVAL_MS: u64 = 60_000;

/// `controller.quota.window.num` (11) and `controller.quota.window.size.seconds` (1): the
/// bucket holds their product in seconds of the quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MutationQuotaConfig {
    /// `controller.quota.window.num`.
    pub window_num: u32,
    /// `controller.quota.window.size.seconds`.
    pub window_size_seconds: u32,
}

impl Default for MutationQuotaConfig {
    fn default() -> Self {
        Self {
            window_num: 11,
            window_size_seconds: 1,
        }
    }
}

/// What may spend partition mutations (Kafka's `ControllerRequestContext.applyPartitionChangeQuota`).
pub trait PartitionChangeQuota {
    /// Spends `partitions`; THROTTLING_QUOTA_EXCEEDED when the quota is exhausted (strict).
    fn apply(&mut self, partitions: u32) -> Result<(), ApiError>;
}

/// No quota (Kafka's `UnboundedControllerMutationQuota`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Unbounded;

impl PartitionChangeQuota for Unbounded {
    fn apply(&mut self, _partitions: u32) -> Result<(), ApiError> {
        Ok(())
    }
}

/// Kafka's `TokenBucket`: full when created, refilled at the quota per second, capped at the
/// burst.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last_update_ms: u64,
    last_used_ms: u64,
}

impl Bucket {
    fn refill(&mut self, quota: f64, burst: f64, now_ms: u64) {
        let elapsed_s = now_ms.saturating_sub(self.last_update_ms) as f64 / 1000.0;
        self.tokens = burst.min(self.tokens + quota * elapsed_s);
        self.last_update_ms = now_ms;
    }
}

/// The sensor key: Kafka's metric tags (sanitized user, client id), either possibly empty.
type Tags = (String, String);

/// Every bucket of this node.
#[derive(Debug, Default, Clone)]
pub struct MutationQuotas {
    cfg: MutationQuotaConfig,
    buckets: BTreeMap<Tags, Bucket>,
    next_purge_ms: u64,
}

/// Which kinds of entity hold a quota (Kafka's `QuotaTypes` bits).
#[derive(Debug, Default, Clone, Copy)]
struct Kinds {
    user_client: bool,
    user: bool,
    client: bool,
}

/// The `controller_mutation_rate` quotas of the image, by (user, client id) entity: `None` a
/// name not given (the entity has no such part), `Some(None)` the default.
type Entity = (Option<Option<String>>, Option<Option<String>>);

fn quotas(image: &MetadataImage) -> BTreeMap<Entity, f64> {
    image
        .client_quotas
        .iter()
        .filter(|(entity, _)| !entity.contains_key(super::client_quotas::IP))
        .filter_map(|(entity, q)| {
            let rate = q.get(CONTROLLER_MUTATION_RATE)?;
            let user = entity.get(super::client_quotas::USER).cloned();
            let client = entity.get(super::client_quotas::CLIENT_ID).cloned();
            Some(((user, client), *rate))
        })
        .collect()
}

fn kinds(quotas: &BTreeMap<Entity, f64>) -> Kinds {
    let mut k = Kinds::default();
    for (user, client) in quotas.keys() {
        match (user, client) {
            (Some(_), Some(_)) => k.user_client = true,
            (Some(_), None) => k.user = true,
            (None, Some(_)) => k.client = true,
            (None, None) => {}
        }
    }
    k
}

/// Kafka's `DefaultQuotaCallback.quotaMetricTags`.
fn metric_tags(quotas: &BTreeMap<Entity, f64>, user: &str, client: &str) -> Tags {
    let k = kinds(quotas);
    let pair = |u: &str, c: &str| (u.to_string(), c.to_string());
    let has = |u: Option<Option<&str>>, c: Option<Option<&str>>| {
        let key: Entity = (
            u.map(|n| n.map(str::to_string)),
            c.map(|n| n.map(str::to_string)),
        );
        quotas.contains_key(&key)
    };
    match (k.user_client, k.user, k.client) {
        (false, false, _) => pair("", client),
        (false, true, false) => pair(user, ""),
        (true, false, false) => pair(user, client),
        _ => {
            let (u, c) = (Some(Some(user)), Some(Some(client)));
            if has(u, c) || has(u, Some(None)) {
                pair(user, client)
            } else if has(u, None) {
                pair(user, "")
            } else if has(Some(None), c) || has(Some(None), Some(None)) {
                pair(user, client)
            } else if has(Some(None), None) {
                pair(user, "")
            } else {
                pair("", client)
            }
        }
    }
}

/// Kafka's `DefaultQuotaCallback.quotaLimit` for a sensor's tags; `None`: no quota.
fn quota_limit(quotas: &BTreeMap<Entity, f64>, tags: &Tags) -> Option<f64> {
    let get = |u: Option<Option<&str>>, c: Option<Option<&str>>| {
        let key: Entity = (
            u.map(|n| n.map(str::to_string)),
            c.map(|n| n.map(str::to_string)),
        );
        quotas.get(&key).copied()
    };
    let (user, client) = (tags.0.as_str(), tags.1.as_str());
    if !user.is_empty() && !client.is_empty() {
        let (u, c) = (Some(Some(user)), Some(Some(client)));
        get(u, c)
            .or_else(|| get(u, Some(None)))
            .or_else(|| get(Some(None), c))
            .or_else(|| get(Some(None), Some(None)))
    } else if !user.is_empty() {
        get(Some(Some(user)), None).or_else(|| get(Some(None), None))
    } else if !client.is_empty() {
        get(None, Some(Some(client))).or_else(|| get(None, Some(None)))
    } else {
        None
    }
}

impl MutationQuotas {
    /// No buckets yet.
    pub fn new(cfg: MutationQuotaConfig) -> Self {
        Self {
            cfg,
            ..Self::default()
        }
    }

    /// How many buckets are held (for tests and metrics).
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether no bucket is held.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// The quota of one request from `principal` (`Type:name`) with `client_id`: strict from
    /// `strict_since` (the API's version), permissive below; unbounded when no
    /// controller_mutation_rate quota is set (Kafka's `newQuotaFor`).
    pub fn quota_for<'a>(
        &'a mut self,
        committed: &MetadataImage,
        principal: &str,
        client_id: &str,
        version: i16,
        strict_since: i16,
        now_ms: u64,
    ) -> RequestQuota<'a> {
        self.purge(now_ms);
        let quotas = quotas(committed);
        if quotas.is_empty() {
            return RequestQuota::unbounded();
        }
        // Kafka keys sensors by the principal's name (the user quota entity's name).
        let user = principal.split_once(':').map_or(principal, |(_, n)| n);
        let tags = metric_tags(&quotas, user, client_id);
        // No quota for the sensor: Kafka's limit is Long.MAX_VALUE, never reached.
        let Some(limit) = quota_limit(&quotas, &tags) else {
            return RequestQuota::unbounded();
        };
        RequestQuota {
            bucket: Some((self, tags, limit)),
            strict: version >= strict_since,
            now_ms,
            throttle_ms: 0,
        }
    }

    fn burst(&self, limit: f64) -> f64 {
        f64::from(self.cfg.window_num) * f64::from(self.cfg.window_size_seconds) * limit
    }

    /// Drops the buckets idle for an hour, at most once a minute.
    fn purge(&mut self, now_ms: u64) {
        if now_ms < self.next_purge_ms {
            return;
        }
        self.next_purge_ms = now_ms.saturating_add(PURGE_INTERVAL_MS);
        self.buckets
            .retain(|_, b| now_ms.saturating_sub(b.last_used_ms) < INACTIVE_EXPIRY_MS);
    }
}

/// One request's quota (Kafka's Strict/PermissiveControllerMutationQuota).
#[derive(Debug)]
pub struct RequestQuota<'a> {
    bucket: Option<(&'a mut MutationQuotas, Tags, f64)>,
    strict: bool,
    now_ms: u64,
    throttle_ms: i32,
}

impl RequestQuota<'_> {
    fn unbounded() -> Self {
        Self {
            bucket: None,
            strict: false,
            now_ms: 0,
            throttle_ms: 0,
        }
    }

    /// The throttle time the answer carries (0 when the quota was never exceeded).
    pub fn throttle_time_ms(&self) -> i32 {
        self.throttle_ms
    }
}

/// Kafka's `throttleTimeMs`: the time to refill from `tokens` (negative) to zero.
fn throttle_ms(tokens: f64, limit: f64) -> i32 {
    let ms = (-tokens / limit * 1000.0).round();
    // A huge deficit saturates (Kafka's `toInt` of a long would wrap; no client waits years).
    if ms >= f64::from(i32::MAX) {
        i32::MAX
    } else {
        ms.max(0.0) as i32
    }
}

impl PartitionChangeQuota for RequestQuota<'_> {
    fn apply(&mut self, partitions: u32) -> Result<(), ApiError> {
        let Some((quotas, tags, limit)) = &mut self.bucket else {
            return Ok(());
        };
        let (limit, now_ms) = (*limit, self.now_ms);
        let burst = quotas.burst(limit);
        let bucket = quotas.buckets.entry(tags.clone()).or_insert(Bucket {
            // Kafka's bucket starts at zero tokens at time zero: its first refill fills it.
            tokens: burst,
            last_update_ms: now_ms,
            last_used_ms: now_ms,
        });
        bucket.last_used_ms = now_ms;
        bucket.refill(limit, burst, now_ms);
        if self.strict {
            // Checked before spending: a request within the quota always passes whole.
            if bucket.tokens < 0.0 {
                self.throttle_ms = throttle_ms(bucket.tokens, limit);
                return Err(ApiError::new(
                    errors::THROTTLING_QUOTA_EXCEEDED,
                    "The throttling quota has been exceeded.",
                ));
            }
            bucket.tokens = burst.min(bucket.tokens - f64::from(partitions));
        } else {
            bucket.tokens = burst.min(bucket.tokens - f64::from(partitions));
            if bucket.tokens < 0.0 {
                self.throttle_ms = throttle_ms(bucket.tokens, limit);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image_with_user_quota(user: &str, rate: f64) -> MetadataImage {
        let mut image = MetadataImage::new();
        let entity = [("user".to_string(), Some(user.to_string()))]
            .into_iter()
            .collect();
        let quotas = [(CONTROLLER_MUTATION_RATE.to_string(), rate)]
            .into_iter()
            .collect();
        image.client_quotas.insert(entity, quotas);
        image
    }

    #[test]
    fn an_idle_bucket_is_dropped_after_an_hour_and_starts_full_again() {
        let image = image_with_user_quota("u", 1.0);
        let mut quotas = MutationQuotas::new(MutationQuotaConfig::default());
        let mut q = quotas.quota_for(&image, "User:u", "c", 7, 6, 1_000);
        q.apply(20).unwrap();
        assert_eq!(quotas.len(), 1);
        // In debt 9 tokens (11 - 20): refused for 9 s.
        let mut q = quotas.quota_for(&image, "User:u", "c", 7, 6, 1_000);
        assert_eq!(
            q.apply(1).unwrap_err().code,
            errors::THROTTLING_QUOTA_EXCEEDED
        );
        assert_eq!(q.throttle_time_ms(), 9000);
        // An hour idle: the bucket is gone, the next request starts a full one.
        let later = 1_000 + INACTIVE_EXPIRY_MS;
        let mut q = quotas.quota_for(&image, "User:u", "c", 7, 6, later);
        q.apply(11).unwrap();
        assert_eq!(q.throttle_time_ms(), 0);
        assert_eq!(quotas.len(), 1);
    }

    #[test]
    fn no_quota_for_the_requester_keeps_no_bucket() {
        let image = image_with_user_quota("u", 1.0);
        let mut quotas = MutationQuotas::new(MutationQuotaConfig::default());
        let mut q = quotas.quota_for(&image, "User:other", "c", 7, 6, 1_000);
        q.apply(1_000_000).unwrap();
        assert!(quotas.is_empty());
        let mut q = quotas.quota_for(&MetadataImage::new(), "User:u", "c", 7, 6, 1_000);
        q.apply(1_000_000).unwrap();
        assert!(quotas.is_empty());
    }
}
