//! The command-line tools other than `start`: what `ferrokraft format`, `info`, `dump` and
//! `format --add-scram` do, on top of the layers they use (storage, snapshots, records,
//! metadata, security).
//!
//! ```text
//!   format ─▶ format::format ─▶ per dir: bootstrap.checkpoint (+ --add-scram credentials,
//!             scram_args), [0-0.checkpoint], meta.properties (last)
//!   info   ─▶ format::describe_dirs
//!   dump   ─▶ dump::dump_path ─▶ text / JSON
//! ```
pub mod dump;
pub mod format;
pub mod scram_args;
