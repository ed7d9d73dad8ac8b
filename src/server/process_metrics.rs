//! The standard `process_*` series (the Prometheus client libraries' process collector), read
//! from `/proc/self` at each scrape. Linux only; elsewhere every value is absent.

/// What a scrape reports of the process.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessStats {
    /// User + system CPU time (s).
    pub cpu_seconds: f64,
    /// Resident set size (bytes).
    pub resident_bytes: f64,
    /// Virtual memory size (bytes).
    pub virtual_bytes: f64,
    /// Open file descriptors.
    pub open_fds: f64,
    /// The soft limit of open files.
    pub max_fds: f64,
    /// Start time since the Unix epoch (s).
    pub start_time_seconds: f64,
}

/// The process now, or `None` when `/proc` cannot be read.
pub fn read() -> Option<ProcessStats> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which may hold spaces and parentheses: split after the
    // last ')'. `rest[0]` is field 3 (state).
    let rest: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let field = |n: usize| rest.get(n - 3).and_then(|v| v.parse::<f64>().ok());
    let ticks = sysconf(libc::_SC_CLK_TCK)?;
    let page = sysconf(libc::_SC_PAGESIZE)?;
    let (utime, stime) = (field(14)?, field(15)?);
    let start_ticks = field(22)?;
    let vsize = field(23)?;
    let rss_pages = field(24)?;
    let boot_time = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse::<f64>().ok())?;
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as f64;
    let max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()?
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| {
            l.trim_start_matches("Max open files")
                .split_whitespace()
                .next()
        })
        .map_or(f64::INFINITY, |v| v.parse().unwrap_or(f64::INFINITY));
    Some(ProcessStats {
        cpu_seconds: (utime + stime) / ticks,
        resident_bytes: rss_pages * page,
        virtual_bytes: vsize,
        open_fds,
        max_fds,
        start_time_seconds: boot_time + start_ticks / ticks,
    })
}

/// `sysconf(name)` as a positive f64.
#[allow(unsafe_code)] // one FFI call with an integer argument, as network/memory.rs's malloc_trim
fn sysconf(name: libc::c_int) -> Option<f64> {
    // SAFETY: sysconf takes an integer and returns one; it touches no memory of ours.
    let v = unsafe { libc::sysconf(name) };
    (v > 0).then_some(v as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_process_reads_itself() {
        let p = super::read().expect("/proc is readable on Linux");
        assert!(p.cpu_seconds >= 0.0);
        assert!(p.resident_bytes > 0.0);
        assert!(p.open_fds >= 3.0, "stdin, stdout, stderr at least");
        assert!(p.max_fds >= p.open_fds);
        assert!(p.start_time_seconds > 1.6e9, "{}", p.start_time_seconds);
    }
}
