//! Shared helpers for integration tests.
pub mod broker;
pub mod clients;
pub mod cluster;
pub mod combined;
pub mod dynamic;
pub mod kafka;
pub mod kube_api;
#[path = "../local/mod.rs"]
pub mod local;
pub mod metadata_shell;
pub mod netns;
pub mod tls;
