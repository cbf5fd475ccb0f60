//! Stage timings on standard error (`SKILLC_TIMINGS=1`), for profiling.

/// Stage timings on standard error when `SKILLC_TIMINGS` is set (for profiling; the lead's
/// benchmarks use them).
pub(super) struct Timer {
    on: bool,
    last: std::cell::Cell<std::time::Instant>,
}

impl Timer {
    pub(super) fn new() -> Timer {
        Timer {
            on: std::env::var_os("SKILLC_TIMINGS").is_some(),
            last: std::cell::Cell::new(std::time::Instant::now()),
        }
    }

    pub(super) fn lap(&self, what: &str) {
        if self.on {
            let now = std::time::Instant::now();
            // Resident memory, from /proc on Linux (pages of 4 KiB).
            let rss = std::fs::read_to_string("/proc/self/statm")
                .ok()
                .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
                .map_or(String::new(), |p| format!(", RSS {} MiB", p * 4 / 1024));
            eprintln!(
                "timing: {what}: {:.1} ms{rss}",
                (now - self.last.get()).as_secs_f64() * 1000.0
            );
            self.last.set(now);
        }
    }
}
