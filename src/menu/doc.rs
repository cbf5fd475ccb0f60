//! The index document of a skill (recipe `doc/1`): the text the menu's embedders see, built
//! deterministically at build time from the frontmatter, the body and the skill's executors.
//!
//! Parts and weights ([`Part::weight`]; chosen on the battery, BENCHMARKS.md "Menu"):
//!
//! | part | source | weight |
//! | --- | --- | ---: |
//! | name | the skill name, hyphens as spaces | 3 |
//! | title | `metadata.title`, else the name | 2 |
//! | triggers | `metadata.triggers` | 3 |
//! | description | `description` (all of it) | 2 |
//! | tags | `tags`/`keywords`/`category` under `metadata` or a namespace of it | 1.5 |
//! | when | `when_to_use`, and body sections titled "When to use…", "Use cases", "Triggers"… | 1.5 |
//! | examples | quoted requests in the body (`- "Summarize this PDF"`), sections "Examples"… | 1.2 |
//! | executors | each executor's canonical name and English + Italian labels | 1.2 |
//! | headings | every heading of the body | 0.8 |
//! | opening | the first [`OPENING_WORDS`] words of the body's prose | 0.5 |
//!
//! Code blocks never enter a document. Each part is capped ([`PART_CHARS`]) so that one huge
//! section cannot dominate.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::lexical::Field;
use crate::skill::yaml::Node;

/// The document recipe's id and version, recorded with every output.
pub const RECIPE: &str = "doc/1";

/// Words of body prose kept as the opening.
pub const OPENING_WORDS: usize = 80;
/// Longest text kept per part, in bytes (cut on a character boundary).
pub const PART_CHARS: usize = 4000;

/// A part of the index document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// The skill name.
    Name,
    /// The title.
    Title,
    /// The triggers.
    Triggers,
    /// The description.
    Description,
    /// Tags and keywords from the metadata.
    Tags,
    /// "When to use" text.
    When,
    /// Example requests.
    Examples,
    /// Executors' names and labels.
    Executors,
    /// Body headings.
    Headings,
    /// The body's opening prose.
    Opening,
}

impl Part {
    /// Its weight in the built-in embedder.
    pub fn weight(self) -> f32 {
        match self {
            Part::Name | Part::Triggers => 3.0,
            Part::Title | Part::Description => 2.0,
            Part::Tags | Part::When => 1.5,
            Part::Examples | Part::Executors => 1.2,
            Part::Headings => 0.8,
            Part::Opening => 0.5,
        }
    }

    /// Whether letter trigrams are taken from it (the short, telling parts).
    pub fn head(self) -> bool {
        matches!(
            self,
            Part::Name | Part::Title | Part::Triggers | Part::Description | Part::Tags | Part::Executors
        )
    }
}

/// An executor as the index document sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorText {
    /// Canonical name (`read_events_google_workspace`).
    pub name: String,
    /// English label.
    pub en: String,
    /// Italian label.
    pub it: String,
}

/// What a skill contributes to its index document.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The skill name.
    pub name: &'a str,
    /// The title ([`super::text::title`]).
    pub title: &'a str,
    /// The full description.
    pub description: &'a str,
    /// Folded triggers.
    pub triggers: &'a [String],
    /// The frontmatter's root mapping.
    pub frontmatter: Option<&'a Node>,
    /// The Markdown body.
    pub body: &'a str,
    /// The skill's admitted executors.
    pub executors: &'a [ExecutorText],
}

/// An index document: one text per part, in [`Part::ALL`] order, empty parts left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexDoc {
    /// `(part, text)`.
    pub parts: Vec<(Part, String)>,
}

impl IndexDoc {
    /// The fields the built-in embedder reads.
    pub fn fields(&self) -> Vec<Field<'_>> {
        self.parts
            .iter()
            .map(|(p, t)| Field {
                text: t,
                weight: p.weight(),
                head: p.head(),
                name: matches!(p, Part::Name | Part::Title),
            })
            .collect()
    }

    /// The plain text given to dense embedders (external or local models): title,
    /// description, triggers, when-to-use and examples first, since models read a bounded
    /// prefix; one part per line.
    pub fn dense_text(&self) -> String {
        let mut lines = Vec::new();
        for want in [
            Part::Title,
            Part::Description,
            Part::Triggers,
            Part::When,
            Part::Examples,
            Part::Tags,
            Part::Executors,
            Part::Headings,
            Part::Opening,
        ] {
            for (p, t) in &self.parts {
                if *p == want {
                    lines.push(t.as_str());
                }
            }
        }
        lines.join("\n")
    }

    /// The texts a dense embedder embeds for this document, one vector each, of the kinds in
    /// `kinds` ([`DensePart::ALL`] for every kind), in tag order whatever `kinds`' order: the
    /// whole [`Self::dense_text`], the head (title, description, triggers, tags), then the
    /// when-to-use text, examples, headings, executors and opening, each cut into at most
    /// [`CHUNKS`] chunks of [`CHUNK_WORDS`] words. Empty parts are left out; a kind not asked
    /// for is not made.
    pub fn dense_parts(&self, kinds: &[DensePart]) -> Vec<(DensePart, String)> {
        let text = |want: Part| {
            self.parts
                .iter()
                .filter(|(p, _)| *p == want)
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut out = Vec::new();
        for kind in DensePart::ALL.into_iter().filter(|k| kinds.contains(k)) {
            let chunked = |part: Part| chunks(&text(part)).into_iter().map(move |c| (kind, c));
            match kind {
                DensePart::Whole => out.push((kind, self.dense_text())),
                DensePart::Head => {
                    let head: Vec<String> = [Part::Title, Part::Description, Part::Triggers, Part::Tags]
                        .into_iter()
                        .map(text)
                        .filter(|t| !t.is_empty())
                        .collect();
                    out.push((kind, head.join("\n")));
                }
                DensePart::When => out.extend(chunked(Part::When)),
                DensePart::Examples => out.extend(chunked(Part::Examples)),
                DensePart::Headings => out.extend(chunked(Part::Headings)),
                DensePart::Executors => out.extend(chunked(Part::Executors)),
                DensePart::Opening => out.extend(chunked(Part::Opening)),
            }
        }
        out.retain(|(_, t)| !t.trim().is_empty());
        out
    }

    /// The dense texts the build embeds: [`Self::dense_parts`] of the kinds in [`EMBEDDED`]
    /// (only those are made: this runs for every skill of every build).
    pub fn embedded_parts(&self) -> Vec<(DensePart, String)> {
        self.dense_parts(EMBEDDED)
    }
}

/// What one dense vector of a skill was embedded from (recipe [`super::dense::FUSION`]): the
/// whole document, or one of its parts. Stored with each vector in `menu.vec` (format 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DensePart {
    /// [`IndexDoc::dense_text`]: every part in one text, cut by the model's window.
    Whole = 0,
    /// Title, description, triggers and tags: what the skill is.
    Head = 1,
    /// "When to use" text.
    When = 2,
    /// Example requests.
    Examples = 3,
    /// Body headings.
    Headings = 4,
    /// Executors' names and labels.
    Executors = 5,
    /// The body's opening prose.
    Opening = 6,
}

impl DensePart {
    /// Every kind, by tag.
    pub const ALL: [DensePart; 7] = [
        DensePart::Whole,
        DensePart::Head,
        DensePart::When,
        DensePart::Examples,
        DensePart::Headings,
        DensePart::Executors,
        DensePart::Opening,
    ];

    /// The kind of a stored tag, `None` for an unknown one.
    pub fn from_tag(tag: u8) -> Option<DensePart> {
        DensePart::ALL.get(usize::from(tag)).copied()
    }
}

/// The dense parts the build embeds and `menu.vec` stores: exactly the parts recipe
/// `fuse/4` reads, as `fuse/3` did ([`super::dense::FUSED_PARTS`]: whole, head, opening), so a
/// skill has 2–4 dense texts. The other kinds are neither made ([`IndexDoc::dense_parts`] makes only the
/// kinds asked for) nor embedded. To measure another rule, build the corpus catalog with the
/// measurement-only feature `dense-parts` (every kind here), run `benches/menu_fusion.rs`
/// (BENCHMARKS.md, "Menu with the local model"; `benches/menu_fusion.sh` does both), and ship
/// it with a new [`super::dense::FUSION`].
#[cfg(not(feature = "dense-parts"))]
pub const EMBEDDED: &[DensePart] = &super::dense::FUSED_PARTS;
/// Every part (feature `dense-parts`, for `benches/menu_fusion.rs` only).
#[cfg(feature = "dense-parts")]
pub const EMBEDDED: &[DensePart] = &DensePart::ALL;

/// Most words in one dense text of a part other than [`DensePart::Whole`] and
/// [`DensePart::Head`]: a part longer than this is cut into chunks of whole lines, so each
/// stays well inside a small model's 256-token window (about 1.3 tokens per English word).
pub const CHUNK_WORDS: usize = 64;
/// Most chunks of one part: a skill has at most `2 + 5 × CHUNKS` dense texts.
pub const CHUNKS: usize = 2;

/// Cuts `text` into at most [`CHUNKS`] chunks of whole lines of at most [`CHUNK_WORDS`]
/// words (a longer line is cut at that many words).
fn chunks(text: &str) -> Vec<String> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().take(CHUNK_WORDS).collect();
        if words.is_empty() {
            continue;
        }
        if !cur.is_empty() && cur.len() + words.len() > CHUNK_WORDS {
            out.push(std::mem::take(&mut cur));
            if out.len() == CHUNKS {
                break;
            }
        }
        if !cur.is_empty() {
            cur.push("\n");
        }
        cur.extend(words);
    }
    if !cur.is_empty() && out.len() < CHUNKS {
        out.push(cur);
    }
    out.into_iter().map(|c| c.join(" ").replace(" \n ", "\n")).collect()
}

fn clip(mut s: String) -> String {
    if s.len() > PART_CHARS {
        let mut end = PART_CHARS;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s.trim().to_owned()
}

/// Metadata keys read as tags, at the top of `metadata` or one level down (`metadata.hermes`).
const TAG_KEYS: &[&str] = &["tags", "keywords", "category", "categories"];

fn tags(frontmatter: Option<&Node>) -> String {
    let mut out = Vec::new();
    let Some(meta) = frontmatter.and_then(|f| f.get_value("metadata")) else {
        return String::new();
    };
    let mut take = |n: &Node| {
        for k in TAG_KEYS {
            if let Some(v) = n.get_value(k) {
                v.for_each_scalar(&mut |s, _| out.push(s.to_owned()));
            }
        }
    };
    take(meta);
    for e in meta.as_map().unwrap_or_default() {
        take(&e.value);
    }
    out.join(", ")
}

/// Section headings whose text is "when to use" material.
fn is_when_heading(h: &str) -> bool {
    let h = h.to_lowercase();
    [
        "when to use",
        "use when",
        "use this skill",
        "use cases",
        "use case",
        "trigger",
        "when to activate",
        "quando usare",
    ]
    .iter()
    .any(|k| h.contains(k))
}

/// Section headings whose items are example requests.
fn is_examples_heading(h: &str) -> bool {
    let h = h.to_lowercase();
    (h.contains("example") || h.contains("esempi") || h.contains("sample"))
        && !h.contains("output")
        && !h.contains("code")
}

/// A quoted request: a list item or paragraph that is one quoted sentence.
fn quoted(s: &str) -> Option<&str> {
    let s = s.trim();
    for (open, close) in [('"', '"'), ('“', '”'), ('«', '»')] {
        if let Some(inner) = s.strip_prefix(open)
            && let Some(end) = inner.find(close)
            && end > 3
            && end < 200
        {
            return Some(&inner[..end]);
        }
    }
    None
}

#[derive(Default)]
struct Walk {
    headings: Vec<String>,
    when: Vec<String>,
    examples: Vec<String>,
    opening: Vec<String>,
    opening_words: usize,
}

/// Reads the body: headings, "when to use" sections, example requests, the opening prose.
fn walk(body: &str) -> Walk {
    let mut w = Walk::default();
    let mut heading: Option<String> = None;
    // The current section: its level and kind.
    let mut section: Option<(HeadingLevel, bool, bool)> = None;
    let mut block = String::new();
    let mut in_code = 0usize;
    for ev in Parser::new_ext(body, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(level)) => {
                let h = heading.take().unwrap_or_default().trim().to_owned();
                if section.is_some_and(|(l, _, _)| level <= l) || section.is_none() {
                    let (when, ex) = (is_when_heading(&h), is_examples_heading(&h));
                    section = (when || ex).then_some((level, when, ex));
                }
                if let Some((_, true, _)) = section {
                    w.when.push(h.clone());
                }
                w.headings.push(h);
            }
            Event::Start(Tag::CodeBlock(_)) => in_code += 1,
            Event::End(TagEnd::CodeBlock) => in_code = in_code.saturating_sub(1),
            Event::Text(t) | Event::Code(t) if in_code == 0 => match heading.as_mut() {
                Some(h) => h.push_str(&t),
                None => block.push_str(&t),
            },
            Event::SoftBreak | Event::HardBreak => block.push(' '),
            Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::TableCell) => {
                let text = std::mem::take(&mut block);
                let text = text.trim();
                if text.is_empty() {
                    continue;
                }
                if let Some(q) = quoted(text) {
                    w.examples.push(q.to_owned());
                } else if let Some((_, when, ex)) = section {
                    if when {
                        w.when.push(text.to_owned());
                    } else if ex && text.len() < 200 {
                        w.examples.push(text.to_owned());
                    }
                }
                if w.opening_words < OPENING_WORDS {
                    let words: Vec<&str> = text.split_whitespace().take(OPENING_WORDS - w.opening_words).collect();
                    w.opening_words += words.len();
                    w.opening.push(words.join(" "));
                }
            }
            _ => {}
        }
    }
    w
}

/// Builds the index document of a skill.
pub fn build(src: &Source<'_>) -> IndexDoc {
    let w = walk(src.body);
    let mut when = Vec::new();
    if let Some(s) = src
        .frontmatter
        .and_then(|f| f.get_value("when_to_use"))
        .and_then(Node::as_str)
    {
        when.push(s.to_owned());
    }
    when.extend(w.when);
    let executors: Vec<String> = src
        .executors
        .iter()
        .map(|e| format!("{} ; {} ; {}", e.name.replace('_', " "), e.en, e.it))
        .collect();
    let texts = [
        (Part::Name, src.name.replace('-', " ")),
        (Part::Title, src.title.to_owned()),
        (Part::Triggers, src.triggers.join(", ")),
        (Part::Description, src.description.to_owned()),
        (Part::Tags, tags(src.frontmatter)),
        (Part::When, when.join("\n")),
        (Part::Examples, w.examples.join("\n")),
        (Part::Executors, executors.join("\n")),
        (Part::Headings, w.headings.join("\n")),
        (Part::Opening, w.opening.join(" ")),
    ];
    IndexDoc {
        parts: texts
            .into_iter()
            .map(|(p, t)| (p, clip(t)))
            .filter(|(_, t)| !t.is_empty())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "# PDF tools\n\nThis skill fills and merges PDF forms for the user.\n\n\
        ## When to use this skill\n\n- The user has a form to fill\n- Merging scanned pages\n\n\
        ## Examples\n\n- \"Merge these two PDFs into one\"\n- Split a PDF by chapter\n\n\
        ```bash\nrm -rf /\n```\n\n## Reference\n\nSee \"the manual for details\" here.\n";

    #[test]
    fn the_document_has_each_part() {
        let doc = build(&Source {
            name: "pdf-tools",
            title: "pdf tools",
            description: "Fill and merge PDF forms.",
            triggers: &["pdf".into()],
            frontmatter: None,
            body: BODY,
            executors: &[ExecutorText {
                name: "create_documents_pdf_tools".into(),
                en: "create documents (pdf tools)".into(),
                it: "crea documenti (pdf tools)".into(),
            }],
        });
        let part = |p: Part| {
            doc.parts
                .iter()
                .find(|x| x.0 == p)
                .map(|x| x.1.clone())
                .unwrap_or_default()
        };
        assert_eq!(part(Part::Name), "pdf tools");
        assert_eq!(
            part(Part::Headings),
            "PDF tools\nWhen to use this skill\nExamples\nReference"
        );
        assert_eq!(
            part(Part::When),
            "When to use this skill\nThe user has a form to fill\nMerging scanned pages"
        );
        assert_eq!(
            part(Part::Examples),
            "Merge these two PDFs into one\nSplit a PDF by chapter"
        );
        assert!(part(Part::Executors).contains("crea documenti"));
        assert!(!doc.dense_text().contains("rm -rf"));
        assert!(part(Part::Opening).starts_with("This skill fills"));
        let dense = doc.dense_parts(&DensePart::ALL);
        let kinds: Vec<DensePart> = dense.iter().map(|d| d.0).collect();
        // The fixture has every kind of part: one text of each, in tag order.
        assert_eq!(kinds, DensePart::ALL);
        assert_eq!(dense[0].1, doc.dense_text());
        // The build's texts are those of the kinds it embeds, made alone.
        let embedded: Vec<_> = dense.iter().filter(|d| EMBEDDED.contains(&d.0)).cloned().collect();
        assert_eq!(doc.embedded_parts(), embedded);
        assert_eq!(dense[1].1, "pdf tools\nFill and merge PDF forms.\npdf");
        assert!(dense.iter().all(|d| !d.1.contains("rm -rf")));
    }

    #[test]
    fn long_parts_are_cut_in_chunks_of_whole_lines() {
        let line = |w: &str, n: usize| vec![w; n].join(" ");
        let text = [
            line("a", 40),
            line("b", 20),
            line("c", 30),
            line("d", 100),
            line("e", 5),
        ]
        .join("\n");
        let c = chunks(&text);
        assert_eq!(c.len(), CHUNKS);
        assert_eq!(c[0], format!("{}\n{}", line("a", 40), line("b", 20)));
        assert_eq!(c[1], line("c", 30));
        // A line longer than a chunk is cut at CHUNK_WORDS words.
        assert_eq!(chunks(&line("d", 100)), [line("d", CHUNK_WORDS)]);
        assert!(chunks("").is_empty());
    }
}
