//! Command line (filled by the foundation work).
