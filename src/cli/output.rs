//! Writing to standard output and standard error without panicking on a closed pipe.

use std::io::{self, Write};

/// A buffered standard output that reports write errors instead of panicking.
pub struct Printer {
    out: io::BufWriter<io::Stdout>,
    /// Whether ANSI colours are wanted.
    pub color: bool,
}

impl Printer {
    /// Standard output, with or without colours.
    pub fn stdout(color: bool) -> Printer {
        Printer {
            out: io::BufWriter::new(io::stdout()),
            color,
        }
    }

    /// Writes `s` and a newline.
    pub fn line(&mut self, s: &str) -> io::Result<()> {
        self.out.write_all(s.as_bytes())?;
        self.out.write_all(b"\n")
    }

    /// Writes `s` as is.
    pub fn write(&mut self, s: &str) -> io::Result<()> {
        self.out.write_all(s.as_bytes())
    }

    /// Flushes buffered output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes a line to standard error (progress, notes), ignoring failures.
    pub fn note(&mut self, s: &str) {
        let _ = self.out.flush();
        eprint_line(format_args!("{s}"));
    }
}

/// Writes one line to standard error, ignoring failures (`eprintln!` panics when standard
/// error is a closed pipe: `skillc build 2>&1 | head -c 5`).
pub(crate) fn eprint_line(args: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr(), "{args}");
}

impl Drop for Printer {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}

/// `1 skill`, `2 skills`.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
