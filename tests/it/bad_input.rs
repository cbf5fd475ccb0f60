//! Bad input found by trial users: every malformed input gets one diagnostic with its code,
//! file, line and column and the exit status README documents, and nothing is lost or
//! written that should not be. Each test runs the real binary on a project made at test time.

use std::path::Path;

use crate::adversarial::project;
use crate::common::{Run, skillc_env};

fn run(cwd: &Path, args: &[&str]) -> Run {
    skillc_env(cwd, args, &[])
}

/// Each TOML input of a project, with the command that reads it and the code of its
/// diagnostics: invalid UTF-8 is reported at the first invalid byte (line 3, column 4: the
/// column counts the characters before it, `é` being one), exit status 2.
#[test]
fn toml_inputs_that_are_not_utf8_are_reported_at_the_byte() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("pipeline.toml", &["plan"], "CF001"),
        ("vocabulary.toml", &["plan"], "VO001"),
        ("translations.toml", &["plan"], "TR010"),
        ("skillc.lock", &["build"], "IM011"),
    ];
    for (file, args, code) in cases {
        let p = project();
        let path = p.path().join(file);
        let mut bytes = if path.exists() {
            std::fs::read(&path).expect("read")
        } else {
            Vec::new()
        };
        // Two more lines, then `# é` and a byte that no UTF-8 text holds.
        bytes.splice(0..0, b"# one\n# two\n# \xC3\xA9\xFF\n".iter().copied());
        std::fs::write(&path, &bytes).expect("write");
        let r = run(p.path(), args);
        assert_eq!(r.code, Some(2), "{file}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("error[{code}]")), "{file}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("{file}:3:4")), "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains("not valid UTF-8: byte 0xFF at offset 16"),
            "{file}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("stream did not contain"), "{file}: {}", r.stderr);
    }
}
