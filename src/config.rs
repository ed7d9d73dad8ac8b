//! Configuration (filled by the foundation work).
