//! The edit action's patch: a unified diff of exactly one hunk of at most [`MAX_HUNK_LINES`]
//! lines, against SKILL.md, that may change the body only (RUNTIME.md §3, "Actions"; seed 002
//! §6.2). Pure.
//!
//! Parsing accepts optional `diff`/`index`/`---`/`+++` headers, then one `@@ -a[,b] +c[,d] @@`
//! header and its lines (` ` context, `-` removed, `+` added, `\ No newline…` ignored; an empty
//! line is an empty context line, as some tools strip the space). Anything else, or a second
//! hunk, refuses the diff. The header's counts are not trusted; its start line is only used
//! to choose between several places the hunk fits, and for a pure insertion.
//!
//! Applying is whitespace-tolerant (lines compare without trailing spaces): the removed and
//! context lines must appear, in order, in the body — a hunk that only fits over the
//! frontmatter "touches the frontmatter" and is refused. Nothing is applied partially.

/// Most lines (context, removed and added) a hunk may have.
pub const MAX_HUNK_LINES: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Line {
    Context(String),
    Remove(String),
    Add(String),
}

/// One parsed hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    old_start: usize,
    lines: Vec<Line>,
}

impl Hunk {
    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        let added = self.lines.iter().filter(|l| matches!(l, Line::Add(_))).count();
        let removed = self.lines.iter().filter(|l| matches!(l, Line::Remove(_))).count();
        (added, removed)
    }
}

fn header_start(line: &str) -> Result<usize, String> {
    // `@@ -12,5 +12,7 @@ optional section`
    let rest = line.strip_prefix("@@ -").ok_or("a hunk header starts with `@@ -`")?;
    let old = rest.split_whitespace().next().unwrap_or("");
    let start = old.split(',').next().unwrap_or("");
    let plus = rest.split_whitespace().nth(1).unwrap_or("");
    if !plus.starts_with('+') || !rest.contains(" @@") {
        return Err(format!("`{line}` is not a hunk header (`@@ -a,b +c,d @@`)"));
    }
    start
        .parse::<usize>()
        .map_err(|_| format!("`{line}` is not a hunk header (`@@ -a,b +c,d @@`)"))
}

/// Parses a diff of one hunk.
///
/// # Errors
/// Why it is not one valid hunk of at most [`MAX_HUNK_LINES`] lines.
pub fn parse(diff: &str) -> Result<Hunk, String> {
    let mut hunk: Option<Hunk> = None;
    let mut trailing_blank = 0usize;
    for raw in diff.lines() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let Some(h) = hunk.as_mut() else {
            if line.starts_with("@@") {
                hunk = Some(Hunk {
                    old_start: header_start(line)?,
                    lines: Vec::new(),
                });
            } else if !(line.starts_with("--- ")
                || line.starts_with("+++ ")
                || line.starts_with("diff ")
                || line.starts_with("index ")
                || line.trim().is_empty())
            {
                return Err(format!("unexpected line before the hunk header: `{}`", clip(line)));
            }
            continue;
        };
        if line.starts_with("@@") {
            return Err("the diff has more than one hunk; an edit is one hunk".into());
        }
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            return Err("the diff touches more than one file".into());
        }
        if line.is_empty() {
            trailing_blank += 1;
            continue;
        }
        for _ in 0..std::mem::take(&mut trailing_blank) {
            h.lines.push(Line::Context(String::new()));
        }
        let (tag, text) = line.split_at(1);
        h.lines.push(match tag {
            " " => Line::Context(text.to_owned()),
            "-" => Line::Remove(text.to_owned()),
            "+" => Line::Add(text.to_owned()),
            "\\" => continue,
            _ => return Err(format!("`{}` is not a diff line (` `, `-` or `+`)", clip(line))),
        });
    }
    let hunk = hunk.ok_or("no hunk (`@@ -a,b +c,d @@`) in the diff")?;
    if hunk.lines.len() > MAX_HUNK_LINES {
        return Err(format!(
            "the hunk has {} lines; an edit is at most {MAX_HUNK_LINES}",
            hunk.lines.len()
        ));
    }
    if hunk.counts() == (0, 0) {
        return Err("the hunk changes nothing".into());
    }
    Ok(hunk)
}

fn clip(line: &str) -> String {
    line.chars().take(60).collect()
}

/// Applies `hunk` to `text` (a whole SKILL.md), whose body starts at line index `body_line`
/// (0-based: the number of lines of the frontmatter and its fences).
///
/// # Errors
/// Why it does not apply to the body (not found, found only over the frontmatter).
pub fn apply(text: &str, body_line: usize, hunk: &Hunk) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let old: Vec<&str> = hunk
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Context(t) | Line::Remove(t) => Some(t.as_str()),
            Line::Add(_) => None,
        })
        .collect();
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let at = if old.is_empty() {
        // `-a,0`: insert after line a.
        let at = hunk.old_start;
        if at < body_line {
            return Err("the hunk inserts into the frontmatter; an edit changes the body only".into());
        }
        if at > lines.len() {
            return Err(format!(
                "the hunk inserts after line {at}, but SKILL.md has {} lines",
                lines.len()
            ));
        }
        at
    } else {
        let same = |a: &str, b: &str| a.trim_end() == b.trim_end();
        let fits: Vec<usize> = (0..=lines.len().saturating_sub(old.len()))
            .filter(|&p| p + old.len() <= lines.len() && old.iter().enumerate().all(|(k, o)| same(lines[p + k], o)))
            .collect();
        let in_body: Vec<usize> = fits.iter().copied().filter(|&p| p >= body_line).collect();
        match (fits.is_empty(), in_body.is_empty()) {
            (true, _) => return Err("the hunk does not apply: its lines are not in SKILL.md".into()),
            (false, true) => return Err("the hunk touches the frontmatter; an edit changes the body only".into()),
            _ => {}
        }
        // Several places fit: the one nearest the header's line (ties: the first).
        let wanted = hunk.old_start.saturating_sub(1);
        in_body
            .into_iter()
            .min_by_key(|&p| (p.abs_diff(wanted), p))
            .unwrap_or(body_line)
    };
    let mut out = String::with_capacity(text.len() + 256);
    for l in &lines[..at] {
        out.push_str(l);
    }
    let mut k = at;
    let mut last_had_eol = true;
    for l in &hunk.lines {
        match l {
            Line::Context(_) => {
                let orig = lines[k];
                out.push_str(orig);
                last_had_eol = orig.ends_with('\n');
                k += 1;
            }
            Line::Remove(_) => {
                last_had_eol = lines[k].ends_with('\n');
                k += 1;
            }
            Line::Add(t) => {
                out.push_str(t);
                out.push_str(eol);
                last_had_eol = true;
            }
        }
    }
    if k == lines.len() && !last_had_eol && out.ends_with(eol) {
        out.truncate(out.len() - eol.len());
    }
    for l in &lines[k..] {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(eol);
        }
        out.push_str(l);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "---\nname: x\ndescription: d\n---\n\n# X\n\nRun `old-tool --flag`.\nThen check.\n";

    #[test]
    fn one_hunk_applies_to_the_body() {
        let diff = "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -8,2 +8,2 @@\n-Run `old-tool --flag`.\n+Run `new-tool --flag`.\n Then check.\n";
        let h = parse(diff).unwrap();
        assert_eq!(h.counts(), (1, 1));
        let out = apply(MD, 4, &h).unwrap();
        assert_eq!(out, MD.replace("old-tool", "new-tool"));
    }

    #[test]
    fn whitespace_tolerant_and_insertions() {
        let h = parse("@@ -9,0 +10,1 @@\n+Done.\n").unwrap();
        assert_eq!(apply(MD, 4, &h).unwrap(), format!("{MD}Done.\n"));
        let h = parse("@@ -8 +8 @@\n-Run `old-tool --flag`.   \n+Run it.\n").unwrap();
        assert!(apply(MD, 4, &h).unwrap().contains("Run it.\nThen check."));
    }

    #[test]
    fn refused_diffs() {
        assert!(
            parse("@@ -1,1 +1,1 @@\n-a\n+b\n@@ -5,1 +5,1 @@\n-c\n+d\n")
                .unwrap_err()
                .contains("more than one hunk")
        );
        assert!(parse("hello\n@@ -1 +1 @@\n-a\n+b\n").is_err());
        assert!(parse("@@ -1 +1 @@\n a\n").unwrap_err().contains("changes nothing"));
        let long: String = std::iter::once("@@ -1,201 +1,201 @@\n".to_owned())
            .chain((0..201).map(|i| format!("+l{i}\n")))
            .collect();
        assert!(parse(&long).unwrap_err().contains("at most 200"));
        let front = parse("@@ -2,1 +2,1 @@\n-name: x\n+name: y\n").unwrap();
        assert!(apply(MD, 4, &front).unwrap_err().contains("frontmatter"));
        let missing = parse("@@ -8,1 +8,1 @@\n-nothing like this\n+x\n").unwrap();
        assert!(apply(MD, 4, &missing).unwrap_err().contains("does not apply"));
        let insert_front = parse("@@ -1,0 +2,1 @@\n+evil: true\n").unwrap();
        assert!(apply(MD, 4, &insert_front).is_err());
    }
}
