//! log (filled by the storage work).
