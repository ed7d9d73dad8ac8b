//! records (filled by the storage work).
