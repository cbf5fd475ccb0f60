//! The `skillc` binary: parse arguments, run the library, map the outcome to an exit code.

use std::io::Write as _;
use std::process::ExitCode;

// A build allocates and frees millions of small strings across threads; mimalloc spends far
// less of it in the allocator than glibc's (BENCHMARKS.md, issue 16).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = <skillc::Args as clap::Parser>::parse();
    match skillc::run(args) {
        Ok(status) => ExitCode::from(status as u8),
        // A closed pipe (`skillc check | head`) is a normal end, not an error.
        Err(e) if skillc::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`: it panics when standard error is a closed pipe.
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            ExitCode::from(skillc::Status::Error as u8)
        }
    }
}
