//! Shared helpers for integration tests.
pub mod cluster;
pub mod dynamic;
pub mod kafka;
