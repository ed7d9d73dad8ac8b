//! snapshot (filled by the storage work).
