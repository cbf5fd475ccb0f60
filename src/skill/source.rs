//! A source text with its display path and line index, for turning byte ranges into spans.

use std::ops::Range;

use crate::diag::{LineIndex, Span};

/// A file's text as the stages see it.
pub struct Source<'a> {
    /// The path shown in diagnostics.
    pub file: &'a str,
    /// The whole text of the file (a BOM, when present, is included).
    pub text: &'a str,
    index: LineIndex,
}

impl<'a> Source<'a> {
    /// Indexes `text` for position lookups.
    pub fn new(file: &'a str, text: &'a str) -> Source<'a> {
        Source {
            file,
            text,
            index: LineIndex::new(text),
        }
    }

    /// The span of bytes `range` of the text.
    pub fn span(&self, range: Range<usize>) -> Span {
        self.index.span(self.text, range)
    }
}
