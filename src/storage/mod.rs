//! storage (filled by the storage work).
