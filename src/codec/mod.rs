//! Wire codec.
