//! Log output in Kafka's pattern: `[2025-01-01 12:00:00,123] INFO message (target)`.
//!
//! Lines go to stderr (stdout is for command output), one write each, or gathered inside
//! [`batched`] (replay's line per record). `RUST_LOG` filters, as usual with
//! tracing; the default is `info`. Span fields (such as `node_id`) are printed in brackets before
//! the message, like Kafka's `[RaftManager id=1]` log prefixes.
//!
//! The filter can change at run time, as Kafka's log4j levels do through the BROKER_LOGGER
//! config resource:
//!
//! ```text
//!   init: RUST_LOG ─▶ EnvFilter in a reload layer ─┬▶ initial_levels() (a LogLevels model)
//!   IncrementalAlterConfigs BROKER_LOGGER ─▶ controller (sans-IO, on its LogLevels) ─▶
//!     NodeOutput::SetLogLevels ─▶ driver ─▶ apply(levels) ─▶ EnvFilter reloaded
//! ```
//!
//! [`levels`] is the model and the mapping to Kafka's loggers; [`loggers`] lists ferrokraft's.

mod fields;
pub mod levels;
pub mod loggers;
mod sink;

pub use sink::batched;

use std::fmt;
use std::sync::OnceLock;

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, EnvFilter, Registry};

pub use levels::{LogLevel, LogLevels, LoggerChange, ROOT_LOGGER};

/// Kafka's log line format.
#[derive(Debug, Default, Clone, Copy)]
pub struct KafkaFormat;

/// This process's node id, printed on every line once known (-1 = not set).
static NODE_ID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// Sets the node id printed on every log line (`[ferrokraft id=N]`, like Kafka's
/// `[RaftManager id=N]` prefixes).
pub fn set_node_id(node_id: i32) {
    NODE_ID.store(node_id, std::sync::atomic::Ordering::Relaxed);
}

/// Converts days since 1970-01-01 to a (year, month, day) civil date (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Milliseconds since the epoch, displayed as `2025-01-01 12:00:00,123` (UTC) where it is
/// written.
struct Timestamp(i64);

/// The text of one second, `2025-01-01 12:00:00`: every line of that second starts with it.
fn second_text(secs: i64) -> String {
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    )
}

thread_local! {
    /// The last second this thread wrote a timestamp in, and its text: a thread logging a
    /// line per replayed record (#41) writes thousands of lines a second, and the calendar
    /// arithmetic and padded formatting of each took a part of replay's time.
    static LAST_SECOND: std::cell::RefCell<(i64, String)> =
        const { std::cell::RefCell::new((i64::MIN, String::new())) };
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(1000);
        let ms = self.0.rem_euclid(1000) as u32;
        let millis = [
            b',',
            b'0' + (ms / 100) as u8,
            b'0' + (ms / 10 % 10) as u8,
            b'0' + (ms % 10) as u8,
        ];
        let millis = std::str::from_utf8(&millis).map_err(|_| fmt::Error)?;
        let cached = LAST_SECOND.try_with(|last| {
            let mut last = last.try_borrow_mut().ok()?;
            if last.0 != secs {
                *last = (secs, second_text(secs));
            }
            Some(f.write_str(&last.1))
        });
        match cached.ok().flatten() {
            Some(written) => written?,
            None => f.write_str(&second_text(secs))?,
        }
        f.write_str(millis)
    }
}

#[allow(clippy::disallowed_methods)] // log timestamps are wall-clock by definition
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl<S, N> FormatEvent<S, N> for KafkaFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        write!(writer, "[{}] ", Timestamp(now_ms()))?;
        writer.write_str(meta.level().as_str())?;
        writer.write_char(' ')?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let ext = span.extensions();
                if let Some(fields) = ext.get::<FormattedFields<N>>() {
                    if !fields.is_empty() {
                        write!(writer, "[{} {}] ", span.name(), fields)?;
                    }
                }
            }
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writer.write_str(" (")?;
        writer.write_str(meta.target())?;
        writer.write_str(")\n")
    }
}

/// The installed subscriber's filter and the levels it was started with.
struct Installed {
    handle: reload::Handle<EnvFilter, Registry>,
    initial: LogLevels,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

/// Installs the global subscriber (once; later calls are no-ops): `RUST_LOG` if it parses,
/// else `info`.
/// `fallback`: the directives to use when `RUST_LOG` is unset or invalid (else `info`).
pub fn init(fallback: Option<String>) {
    let directives = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|d| EnvFilter::try_new(d).is_ok())
        .or(fallback.filter(|d| EnvFilter::try_new(d).is_ok()))
        .unwrap_or_else(|| "info".to_string());
    let Ok(filter) = EnvFilter::try_new(&directives) else {
        return;
    };
    let (filter, handle) = reload::Layer::new(filter);
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(|| sink::LineWriter)
                .with_ansi(false)
                .fmt_fields(fields::KafkaFields)
                .event_format(KafkaFormat),
        )
        .try_init();
    if installed.is_ok() {
        sink::write_batch_on_panic();
        let _ = INSTALLED.set(Installed {
            handle,
            initial: LogLevels::parse(&directives),
        });
    }
}

/// The levels the process started with (`RUST_LOG`); ferrokraft's default when [`init`]
/// installed nothing (tests, embedders).
pub fn initial_levels() -> LogLevels {
    INSTALLED
        .get()
        .map(|i| i.initial.clone())
        .unwrap_or_default()
}

/// Why [`apply`] changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// [`init`] did not install ferrokraft's subscriber.
    #[error("no reloadable log filter is installed")]
    NotInstalled,
    /// The filter could not be built or swapped in.
    #[error("{0}")]
    Filter(String),
}

/// Makes `levels` the process's log filter, from the next event on.
pub fn apply(levels: &LogLevels) -> Result<(), ApplyError> {
    let installed = INSTALLED.get().ok_or(ApplyError::NotInstalled)?;
    let filter =
        EnvFilter::try_new(levels.directives()).map_err(|e| ApplyError::Filter(e.to_string()))?;
    installed
        .handle
        .reload(filter)
        .map_err(|e| ApplyError::Filter(e.to_string()))
}

/// What the tracing events of `f` print at `level` and above, without colours: how the
/// unit tests of the binary and the controller read the lines they log (the global
/// subscriber of [`init`] is left alone).
pub fn captured(level: tracing::Level, f: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = buffer.0.lock().map(|b| b.clone()).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_use_kafka_layout() {
        // In this order a thread's kept second is reused (…,123 then …,999), left for the
        // next second, for an earlier one, and for another day.
        for (ms, text) in [
            (0, "1970-01-01 00:00:00,000"),
            (1_700_000_000_123, "2023-11-14 22:13:20,123"),
            (1_700_000_000_999, "2023-11-14 22:13:20,999"),
            (1_700_000_001_007, "2023-11-14 22:13:21,007"),
            (1_699_999_999_050, "2023-11-14 22:13:19,050"),
            (951_782_400_000, "2000-02-29 00:00:00,000"),
        ] {
            assert_eq!(Timestamp(ms).to_string(), text, "{ms}");
        }
    }
}
