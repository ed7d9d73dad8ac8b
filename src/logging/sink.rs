//! Where the process's log lines go: stderr, written by a thread of its own.
//!
//! ```text
//!   any thread: event ─format─▶ one line ─append (lock, memcpy)─▶ pending ──┐
//!   log-writer thread: ◀─wake─ takes everything pending ─▶ one write(2) to stderr
//!   exit, panic: flush() waits until what was logged before it is written
//! ```
//!
//! A line per replayed record is what Kafka's controller logs at INFO, a million lines for a
//! million partitions created; written one `write(2)` each, the calls alone held the raft
//! thread for a part of every CreateTopics (#41). Here the thread that logs only copies the
//! line, and lines that arrive while the writer writes go out together in its next call.
//! Nothing is dropped: past [`PENDING_LIMIT_BYTES`] a logging thread waits for the writer.

use std::io::Write;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// Bytes held for the writer before a logging thread waits for it to catch up.
const PENDING_LIMIT_BYTES: usize = 8 << 20;

/// How long the writer lets lines gather after the first, unless this many are waiting.
const GATHER_WAIT: std::time::Duration = std::time::Duration::from_millis(1);
const GATHER_BYTES: usize = 256 << 10;

/// The lines not yet written, and whether the writer is writing some.
#[derive(Default)]
struct State {
    pending: Vec<u8>,
    writing: bool,
}

/// The shared buffer between the logging threads and the writer.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when lines arrive in an empty buffer.
    arrived: Condvar,
    /// Signalled when the writer finished a write.
    written: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A thread that panicked while holding the lock left whole lines behind: appends
        // and swaps never leave a line half done.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn append(&self, line: &[u8]) {
        let mut state = self.lock();
        while state.pending.len() >= PENDING_LIMIT_BYTES {
            state = self.written.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let was_empty = state.pending.is_empty();
        state.pending.extend_from_slice(line);
        drop(state);
        // A buffer that held lines already has the writer's attention.
        if was_empty {
            self.arrived.notify_one();
        }
    }

    /// The writer: takes everything pending, writes it in one call, forever.
    fn run(&self, out: &mut dyn Write) {
        let mut taken = Vec::new();
        loop {
            let mut state = self.lock();
            while state.pending.is_empty() {
                state = self.arrived.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if state.pending.len() < GATHER_BYTES {
                // Let a burst gather: one write and one wake-up a millisecond at most,
                // not one per line.
                drop(state);
                std::thread::sleep(GATHER_WAIT);
                state = self.lock();
            }
            std::mem::swap(&mut state.pending, &mut taken);
            state.writing = true;
            drop(state);
            // stderr failing leaves nowhere to say so, as for any logger writing to it.
            let _ = out.write_all(&taken);
            let _ = out.flush();
            taken.clear();
            self.lock().writing = false;
            self.written.notify_all();
        }
    }

    /// Waits until every line appended before the call is written.
    fn flush(&self) {
        let mut state = self.lock();
        while !state.pending.is_empty() || state.writing {
            state = self.written.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The writer thread's name.
const WRITER_THREAD: &str = "log-writer";

/// The writer's buffer; `None` when no writer thread could be started.
static SINK: OnceLock<Option<&'static Shared>> = OnceLock::new();

/// Starts the writer thread (once). Lines go straight to stderr if it cannot be started.
pub(super) fn start() {
    SINK.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::default());
        std::thread::Builder::new()
            .name(WRITER_THREAD.into())
            .spawn(move || shared.run(&mut std::io::stderr()))
            .ok()?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            flush();
            previous(info);
        }));
        Some(shared)
    });
}

/// Waits until every line logged before the call is written to stderr: before the process
/// exits or prints to stderr itself, and before a panic's message.
pub fn flush() {
    // The writer waiting for itself (a panic on its own thread) would never return.
    if std::thread::current().name() == Some(WRITER_THREAD) {
        return;
    }
    if let Some(Some(shared)) = SINK.get() {
        shared.flush();
    }
}

/// The writer tracing's fmt layer gets for each event: its one `write_all` of the formatted
/// line becomes an append.
pub(super) struct LineWriter;

impl Write for LineWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        match SINK.get() {
            Some(Some(shared)) => shared.append(line),
            _ => std::io::stderr().write_all(line)?,
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
    use std::sync::Arc;

    /// A writer that records each call, so the test sees lines batched into writes.
    #[derive(Clone, Default)]
    struct Calls(Arc<Mutex<Vec<Vec<u8>>>>);

    impl Write for Calls {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Lines from several threads all arrive, each whole and in its thread's order, and a
    /// flush returns only once everything appended before it is written.
    #[test]
    fn every_line_is_written_whole_in_order_and_flush_waits_for_them() {
        let shared: &'static Shared = Box::leak(Box::default());
        let calls = Calls::default();
        let mut out = calls.clone();
        std::thread::spawn(move || shared.run(&mut out));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        shared.append(format!("thread {t} line {i}\n").as_bytes());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        shared.flush();
        let writes = calls.0.lock().unwrap().clone();
        let text = String::from_utf8(writes.concat()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 80_000);
        for t in 0..4 {
            let mine: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| l.starts_with(&format!("thread {t} ")))
                .collect();
            let expected: Vec<String> = (0..20_000)
                .map(|i| format!("thread {t} line {i}"))
                .collect();
            assert_eq!(mine, expected);
        }
        // Lines that came while the writer wrote went out together.
        assert!(writes.len() < 80_000, "{} writes", writes.len());
    }

    /// A logging thread that finds the buffer full waits for the writer instead of dropping
    /// lines or growing without bound.
    #[test]
    fn a_full_buffer_holds_the_logging_thread_until_the_writer_takes_it() {
        let shared: &'static Shared = Box::leak(Box::default());
        shared.append(&vec![b'x'; PENDING_LIMIT_BYTES]);
        let blocked = std::thread::spawn(move || shared.append(b"after\n"));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!blocked.is_finished());
        assert_eq!(shared.lock().pending.len(), PENDING_LIMIT_BYTES);
        let calls = Calls::default();
        let mut out = calls.clone();
        std::thread::spawn(move || shared.run(&mut out));
        blocked.join().unwrap();
        shared.flush();
        let written = calls.0.lock().unwrap().concat();
        assert_eq!(written.len(), PENDING_LIMIT_BYTES + 6);
        assert!(written.ends_with(b"after\n"));
    }
}
