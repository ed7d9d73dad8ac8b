//! Where the process's log lines go: stderr, one `write(2)` per line, except inside
//! [`batched`], where a thread's lines are gathered and written together when the scope ends.
//!
//! ```text
//!   event ─format─▶ one line ─┬─ outside a batch ─▶ write(2) to stderr, before the event returns
//!                             └─ inside batched(f) ─▶ this thread's buffer ─(f returns, 1 MiB
//!                                  gathered, or a panic on the thread)─▶ one write(2)
//! ```
//!
//! Kafka's controller logs a line per replayed record at INFO: a million lines for a million
//! partitions created, and a `write(2)` each held the raft thread for a part of every
//! CreateTopics (#41). Replay batches its lines. A batch ends before its thread does
//! anything the world can see (an answer sent, a file written), so a line logged before an
//! action is still in the file by the time the action is seen; nothing is dropped.

use std::cell::RefCell;
use std::io::Write;

/// Bytes a batch gathers before it writes them without waiting for its end.
const BATCH_LIMIT_BYTES: usize = 1 << 20;

/// This thread's batch: whether one is open, and its lines (the buffer's capacity is kept).
struct Batch {
    open: bool,
    lines: Vec<u8>,
}

thread_local! {
    static BATCH: RefCell<Batch> = const {
        RefCell::new(Batch {
            open: false,
            lines: Vec::new(),
        })
    };
}

/// Runs `f` with this thread's log lines gathered and written together when it returns (or
/// unwinds). A batch inside a batch is part of the outer one.
pub fn batched<T>(f: impl FnOnce() -> T) -> T {
    let opened = BATCH.with(|b| match b.try_borrow_mut() {
        Ok(mut b) if !b.open => {
            b.open = true;
            true
        }
        _ => false,
    });
    if !opened {
        return f();
    }
    /// Closes the batch and writes its lines, on return and on unwinding alike.
    struct Close;
    impl Drop for Close {
        fn drop(&mut self) {
            write_batch(false);
        }
    }
    let _close = Close;
    f()
}

/// Writes this thread's gathered lines, and closes its batch unless `keep_open`.
fn write_batch(keep_open: bool) {
    BATCH.with(|b| {
        if let Ok(mut b) = b.try_borrow_mut() {
            if !b.lines.is_empty() {
                emit(&b.lines);
                b.lines.clear();
            }
            b.open &= keep_open;
        }
    });
}

/// Writes `bytes` to stderr. Failing, it leaves nowhere to say so, as for any logger
/// writing there.
#[cfg(not(test))]
fn emit(bytes: &[u8]) {
    let _ = std::io::stderr().write_all(bytes);
}

/// The unit tests read what would have gone to stderr.
#[cfg(test)]
fn emit(bytes: &[u8]) {
    tests::EMITTED.with(|e| e.borrow_mut().extend_from_slice(bytes));
}

/// Installs a panic hook that writes the panicking thread's gathered lines before the
/// panic's message, so the lines read in the order they were logged.
pub(super) fn write_batch_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        write_batch(true);
        previous(info);
    }));
}

/// The writer tracing's fmt layer gets for each event: its one `write_all` of the formatted
/// line goes to this thread's batch if one is open, else straight to stderr.
pub(super) struct LineWriter;

impl Write for LineWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        let gathered = BATCH.with(|b| match b.try_borrow_mut() {
            Ok(mut b) if b.open => {
                b.lines.extend_from_slice(line);
                Some(b.lines.len())
            }
            _ => None,
        });
        match gathered {
            None => emit(line),
            Some(bytes) if bytes >= BATCH_LIMIT_BYTES => write_batch(true),
            Some(_) => {}
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    thread_local! {
        pub(super) static EMITTED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    fn emitted() -> Vec<u8> {
        EMITTED.with(|e| std::mem::take(&mut *e.borrow_mut()))
    }

    fn is_open() -> bool {
        BATCH.with(|b| b.borrow().open)
    }

    /// Inside a batch lines are held until it ends, nested batches included; past the limit
    /// they go out without waiting; outside one each goes out at once.
    #[test]
    fn a_batch_holds_its_lines_until_it_ends() {
        LineWriter.write_all(b"outside\n").unwrap();
        assert_eq!(emitted(), b"outside\n");
        let during = batched(|| {
            LineWriter.write_all(b"one\n").unwrap();
            batched(|| LineWriter.write_all(b"two\n").unwrap());
            // The inner batch is part of the outer one: still held.
            assert!(emitted().is_empty());
            let big = vec![b'x'; BATCH_LIMIT_BYTES];
            LineWriter.write_all(&big).unwrap();
            let at_limit = emitted();
            assert_eq!(
                at_limit.len(),
                8 + BATCH_LIMIT_BYTES,
                "a full batch goes out at once"
            );
            assert!(at_limit.starts_with(b"one\ntwo\nxxx"));
            LineWriter.write_all(b"three\n").unwrap();
            assert!(is_open());
            emitted()
        });
        assert!(during.is_empty());
        assert_eq!(emitted(), b"three\n");
        assert!(!is_open());
    }

    /// A batch whose closure panics is closed, and its lines are written, not kept.
    #[test]
    fn a_panic_inside_a_batch_closes_it_and_writes_its_lines() {
        let result = std::panic::catch_unwind(|| {
            batched(|| {
                LineWriter.write_all(b"before the panic\n").unwrap();
                panic!("in the batch");
            })
        });
        assert!(result.is_err());
        assert_eq!(emitted(), b"before the panic\n");
        assert!(!is_open());
    }
}
