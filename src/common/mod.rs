//! The ground floor: Kafka's shared values, each defined once, that every layer may use.
//!
//! Nothing here does I/O or imports another module of the crate but `records`: error codes and
//! their messages ([`errors`]), the releases and metadata.version levels ([`release`]), who a
//! request comes from ([`principal`], [`security_protocol`]), secrets that must not be logged
//! ([`secret`]), a node's static properties as given ([`static_properties`]), Kafka's Uuid text form ([`uuid`]), an offset with its epoch
//! ([`offset_epoch`]), the Java behaviours Kafka's answers depend on ([`java`]), and Yammer-style histograms for the
//! metrics ([`yammer`]).

pub mod acl;
pub mod errors;
pub mod java;
pub mod offset_epoch;
pub mod principal;
pub mod release;
pub mod secret;
pub mod security_protocol;
pub mod static_properties;
pub mod uuid;
pub mod yammer;
