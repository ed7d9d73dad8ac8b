//! Network (filled by the foundation work).
