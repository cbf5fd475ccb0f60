//! A text file as the behaviour rules see it: logical lines (backslash-continued shell lines
//! joined, a finding pointing at the first), each with its Markdown context — prose, a quoted
//! block or runnable code, its code block, its nearest heading and the prose lines that give
//! it context (context rules C2 and C3, [`super::context`]) — and its trigger categories.

use crate::scan::lexicon::{QUOTED_FENCES, mask_of};

/// What a line of a Markdown file is (a script is all code).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// A paragraph, a list item, a heading, a quote.
    Prose,
    /// A fenced block marked as not meant to be run (`text`, `output`, …).
    Quoted,
    /// A runnable code block, the frontmatter, or a script.
    Code,
}

/// One logical line.
#[derive(Clone, Debug)]
pub(crate) struct Line {
    /// Byte range of the (logical) line's first physical line.
    pub(crate) start: usize,
    /// End of that range.
    pub(crate) end: usize,
    /// 1-based physical line number.
    pub(crate) number: u32,
    /// Prose, quoted or code.
    pub(crate) kind: Kind,
    /// 0 outside code; otherwise the code block (a script is one block).
    pub(crate) block: u32,
    /// Line index of the nearest heading, plus one (0: none).
    pub(crate) heading: usize,
    /// Line indices of the prose giving context to this line (C3).
    pub(crate) ctx: (usize, usize),
    /// Trigger categories ([`mask_of`]); 0 for lines no rule looks at.
    pub(crate) mask: u16,
    /// Logical text when backslash continuation joined lines.
    pub(crate) joined: Option<String>,
}

impl Line {
    /// The logical text of the line.
    pub(crate) fn text<'t>(&'t self, text: &'t str) -> &'t str {
        self.joined.as_deref().unwrap_or(&text[self.start..self.end])
    }
}

/// Splits the text into lines with their Markdown context, joining `\`-continued code lines.
pub(crate) fn split_lines(text: &str, markdown: bool) -> Vec<Line> {
    let block = u32::from(!markdown);
    let mut sp = Splitter {
        markdown,
        lines: Vec::new(),
        fence: None,
        kind: if markdown { Kind::Prose } else { Kind::Code },
        block,
        blocks: block,
        heading: 0,
        block_ctx: (0, 0),
        prose_run_start: 0,
        pending: None,
        // A SKILL.md frontmatter is data that installers run (`metadata.*.install` commands):
        // code, not prose.
        in_front: markdown && text.trim_start_matches('\u{FEFF}').starts_with("---"),
    };
    let mut offset = 0usize;
    for (n, physical) in text.split('\n').enumerate() {
        let start = offset;
        offset += physical.len() + 1;
        let body = physical.strip_suffix('\r').unwrap_or(physical);
        let at = At {
            start,
            end: start + body.len(),
            number: u32::try_from(n + 1).unwrap_or(u32::MAX),
            first: n == 0,
        };
        if sp.in_front {
            sp.front(at, body);
        } else if let Some(p) = sp.pending.take() {
            sp.continuation(p, at, body);
        } else if !(sp.markdown && sp.fence_line(at, body.trim_start())) {
            sp.plain(at, body);
        }
    }
    let mut lines = sp.lines;
    if let Some(mut p) = sp.pending {
        p.mask = mask_of(p.joined.as_deref().unwrap_or_default());
        lines.push(p);
    }
    // Lines were pushed after their continuations: keep them in order.
    lines.sort_by_key(|l| l.start);
    lines
}

/// Where a physical line is.
#[derive(Clone, Copy)]
struct At {
    start: usize,
    end: usize,
    number: u32,
    first: bool,
}

/// The state of [`split_lines`] between physical lines.
struct Splitter {
    markdown: bool,
    lines: Vec<Line>,
    /// The open fence: its character and length.
    fence: Option<(u8, usize)>,
    kind: Kind,
    block: u32,
    blocks: u32,
    heading: usize,
    /// The context lines of the open code block (C3).
    block_ctx: (usize, usize),
    prose_run_start: usize,
    /// A `\`-ended code line waiting for its continuation.
    pending: Option<Line>,
    in_front: bool,
}

impl Splitter {
    /// A line of the frontmatter (code), or its closing fence.
    fn front(&mut self, at: At, body: &str) {
        let fence = body.trim_start_matches('\u{FEFF}').trim_end();
        let closing = !at.first && (fence == "---" || fence == "...");
        let idx = self.lines.len();
        self.lines.push(Line {
            start: at.start,
            end: at.end,
            number: at.number,
            kind: Kind::Code,
            block: u32::MAX,
            heading: 0,
            ctx: (idx, idx),
            mask: if at.first || closing { 0 } else { mask_of(body) },
            joined: None,
        });
        self.in_front = !closing;
        self.prose_run_start = idx + 1;
    }

    /// The continuation of the `\`-ended code line `p`.
    fn continuation(&mut self, mut p: Line, at: At, body: &str) {
        let joined = p.joined.get_or_insert_with(String::new);
        joined.push(' ');
        joined.push_str(body.trim_start());
        let more = body.trim_end().ends_with('\\');
        if more {
            if let Some(j) = p.joined.as_mut() {
                j.truncate(j.trim_end().len().saturating_sub(1));
            }
            self.pending = Some(p);
        } else {
            p.mask = mask_of(p.joined.as_deref().unwrap_or_default());
            self.lines.push(p);
        }
        self.lines.push(Line {
            start: at.start,
            end: at.end,
            number: at.number,
            kind: self.kind,
            block: self.block,
            heading: self.heading,
            ctx: (0, 0),
            mask: 0,
            joined: None,
        });
    }

    /// A Markdown fence that opens or closes a block (pushed as prose; `true`), or notes a
    /// heading (`false`: the line is still pushed by [`Splitter::plain`]).
    fn fence_line(&mut self, at: At, trimmed: &str) -> bool {
        let fence_char = trimmed.as_bytes().first().copied().filter(|c| *c == b'`' || *c == b'~');
        let run = fence_char.map_or(0, |c| trimmed.bytes().take_while(|&b| b == c).count());
        match (self.fence, fence_char) {
            (None, Some(c)) if run >= 3 => {
                let info = trimmed[run..]
                    .trim()
                    .split([' ', '{', ','])
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                self.fence = Some((c, run));
                self.kind = if QUOTED_FENCES.contains(&info.as_str()) {
                    Kind::Quoted
                } else {
                    Kind::Code
                };
                self.blocks += 1;
                self.block = self.blocks;
                let idx = self.lines.len();
                self.block_ctx = (self.prose_run_start.max(idx.saturating_sub(3)), idx);
                self.push_fence(at);
                return true;
            }
            (Some((c, len)), Some(c2)) if c == c2 && run >= len && trimmed[run..].trim().is_empty() => {
                self.fence = None;
                self.kind = Kind::Prose;
                self.block = 0;
                self.prose_run_start = self.lines.len() + 1;
                self.push_fence(at);
                return true;
            }
            _ => {}
        }
        if self.fence.is_none() && trimmed.starts_with('#') {
            self.heading = self.lines.len() + 1;
            self.prose_run_start = self.lines.len() + 1;
        }
        false
    }

    fn push_fence(&mut self, at: At) {
        let idx = self.lines.len();
        self.lines.push(Line {
            start: at.start,
            end: at.end,
            number: at.number,
            kind: Kind::Prose,
            block: 0,
            heading: self.heading,
            ctx: (idx, idx),
            mask: 0,
            joined: None,
        });
    }

    /// Any other line: prose, or code (held back when it ends with `\`).
    fn plain(&mut self, at: At, body: &str) {
        let idx = self.lines.len();
        let ctx = if self.kind == Kind::Prose || !self.markdown {
            (self.prose_run_start.max(idx.saturating_sub(2)), idx)
        } else {
            self.block_ctx
        };
        let mut line = Line {
            start: at.start,
            end: at.end,
            number: at.number,
            kind: self.kind,
            block: self.block,
            heading: self.heading,
            ctx,
            mask: mask_of(body),
            joined: None,
        };
        if self.kind != Kind::Prose && body.trim_end().ends_with('\\') {
            let t = body.trim_end();
            line.joined = Some(t[..t.len() - 1].to_owned());
            self.pending = Some(line);
            return;
        }
        self.lines.push(line);
    }
}
