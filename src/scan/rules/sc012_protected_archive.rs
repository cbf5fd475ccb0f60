//! `SC012` protected-archive: a password-protected archive — unpacked with a password on the
//! command line (high), or an archive named within two lines of a password (high), critical
//! when there are instructions to run it in the same section (six lines either side): the
//! password keeps scanners out. With instructions to run it, it is an instruction to the
//! reader, so prose does not lower it (the ClawHavoc "run the installer before using this
//! skill" stays critical in a paragraph); a description of one still is lowered.
//!
//! Fixtures: `glot-zip-installer`, `prompt-protected-archive`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::{ARCHIVE, ARCHIVE_WORDS, PASSWORD, RUN_WORDS};
use crate::scan::rules::{Window, already};

/// The rule on one line (`raw` as written): unpacking with a password on the command line
/// (case matters: `unzip -p` pipes, `unzip -P` takes a password).
pub(crate) fn line(raw: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & ARCHIVE != 0
        && let Some(at) = [
            " -P ",
            "unrar x -p",
            "unrar e -p",
            "7z x -p",
            "7z e -p",
            "7za x -p",
            "--password",
        ]
        .iter()
        .filter(|w| !w.starts_with(' ') || raw.contains("unzip") || raw.contains("zip "))
        .find_map(|w| raw.find(w))
    {
        push(Hit {
            rule: &rules::SC012,
            severity: FindingSeverity::High,
            at,
            reason: "a password-protected archive is unpacked: its contents were not scanned".to_owned(),
            vendor: false,
        });
    }
}

/// The rule on line `i` and its neighbours: an archive and a password close together.
pub(crate) fn window(w: &Window<'_>, i: usize, hits: &mut Vec<(usize, Hit)>) {
    if w.line(i).mask & ARCHIVE == 0 || already(hits, i, "SC012") {
        return;
    }
    let s = w.low(i);
    let archive_at = ARCHIVE_WORDS.iter().filter_map(|a| s.find(a)).min();
    let password = w.near(i, 2).any(|j| w.line(j).mask & PASSWORD != 0);
    if let Some(at) = archive_at
        && password
    {
        // The instruction to run it may be a few list items away ("1. Download … 2. Extract
        // with password … 3. Run … before using this skill"): same section, six lines.
        let heading = w.line(i).heading;
        let run = w
            .near(i, 6)
            .filter(|&j| w.line(j).heading == heading)
            .any(|j| RUN_WORDS.iter().any(|r| w.low(j).contains(r)));
        let (severity, reason) = if run {
            (
                FindingSeverity::Critical,
                "a password-protected archive with instructions to run it: the password keeps scanners out".to_owned(),
            )
        } else {
            (
                FindingSeverity::High,
                "a password-protected archive: its contents cannot be scanned".to_owned(),
            )
        };
        hits.push((
            i,
            Hit {
                rule: &rules::SC012,
                severity,
                at,
                reason,
                vendor: false,
            },
        ));
    }
}
