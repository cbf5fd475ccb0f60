//! Extraction: the sub-commands a skill exposes, with their arguments (PRODUCT.md,
//! "Sub-commands: where they come from").
//!
//! Sources, in order: typed `metadata.gaia.tools`; then the Markdown body — fenced shell
//! blocks, inline code in list items, and table rows whose first cell is code. A command line
//! is an invocation when its program is the skill's own script (under any prefix or launcher),
//! a shell variable aliased to such a script, or a binary the skill declares. The sub-command
//! is the run of leading plain words (at most three) before the first flag, placeholder or
//! value; the arguments are the flags and positionals seen across all its invocations.
//! A skill without sub-commands is instruction-only: no plan, not an error.
//!
//! Rooms: [`model`] (the data), [`markdown`] (command lines of the body), [`shell`] (words),
//! [`resolve`] (which program a line runs), [`args`] (arguments and value shapes); this file
//! groups invocations into sub-commands.

mod args;
mod markdown;
pub mod model;
mod resolve;
pub mod shell;

use std::collections::{BTreeMap, HashMap};

use crate::db::{Settings, SkillSource};
use crate::diag::LineIndex;
use crate::skill::{self, validate::Analysis};
use args::{is_command_word, looks_like_value, merge_args};
use markdown::Candidate;
pub use model::{Arg, Extraction, MAX_WORDS, Program, SubCommand};
pub use resolve::{EXCLUDED_FIRST_WORDS, EXCLUDED_PROGRAMS};
use resolve::{Resolver, assignment, variable_name};
use shell::Word;

/// Extracts the sub-commands of a skill.
#[salsa::tracked(returns(ref))]
pub fn extract_skill(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> Extraction {
    let analysis = skill::analyze_skill(db, skill, settings);
    let files: Vec<String> = skill.files(db).iter().map(|f| f.rel_path(db).clone()).collect();
    let text = skill
        .skill_md(db)
        .and_then(|f| f.contents(db).bytes().and_then(|b| std::str::from_utf8(b).ok()));
    extract(analysis, text.unwrap_or_default(), &files)
}

/// Extraction over already-read parts (pure; used by the query and by tests).
pub fn extract(analysis: &Analysis, text: &str, files: &[String]) -> Extraction {
    let mut ex = Extractor::new(analysis, files);
    if let Some(g) = &analysis.model.gaia {
        let module = if files.iter().any(|f| f == "tools.py") {
            "tools.py"
        } else {
            ""
        };
        for tool in &g.tools {
            ex.out.push(SubCommand {
                words: tool
                    .name
                    .split('_')
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect(),
                program: Program::Tool {
                    module: module.to_owned(),
                    function: tool.name.clone(),
                },
                args: tool
                    .params
                    .iter()
                    .map(|p| Arg {
                        name: p.name.clone(),
                        ty: p.ty,
                        required: p.required,
                        flag: None,
                        position: None,
                        description: p.description.clone(),
                        default: p.default.clone(),
                    })
                    .collect(),
                source_section: "metadata.gaia.tools".into(),
                line: LineIndex::new(text).pos(text, tool.span.start).line,
                invocations: 1,
                description: tool.description.clone(),
            });
        }
    }
    if let Some(body) = &analysis.body
        && body.end <= text.len()
    {
        ex.scan_body(text, body.start);
    }
    ex.finish()
}

struct Invocation {
    program: Program,
    words: Vec<String>,
    rest: Vec<Word>,
    line: u32,
    section: String,
    description: Option<String>,
}

struct Extractor<'a> {
    resolver: Resolver<'a>,
    aliases: HashMap<String, Vec<Word>>,
    invocations: Vec<Invocation>,
    out: Vec<SubCommand>,
}

impl<'a> Extractor<'a> {
    fn new(analysis: &Analysis, files: &'a [String]) -> Self {
        let bins = analysis
            .model
            .bins
            .iter()
            .filter(|b| !EXCLUDED_PROGRAMS.contains(&b.as_str()))
            .cloned()
            .collect();
        Extractor {
            resolver: Resolver { files, bins },
            aliases: HashMap::new(),
            invocations: Vec::new(),
            out: Vec::new(),
        }
    }

    fn scan_body(&mut self, text: &str, body_start: usize) {
        for c in markdown::candidates(text, body_start) {
            self.scan_line(&c);
        }
    }

    fn scan_line(&mut self, c: &Candidate) {
        let text = c.text.trim();
        let text = text.strip_prefix("$ ").unwrap_or(text);
        for cmd in shell::simple_commands(shell::tokenize(text)) {
            self.scan_command(cmd, c);
        }
    }

    fn scan_command(&mut self, mut words: Vec<Word>, c: &Candidate) {
        // `export X=…` / `alias x='…'` / `X=…` define aliases; `X=… cmd` sets env for cmd.
        if words
            .first()
            .is_some_and(|w| !w.quoted && (w.text == "export" || w.text == "alias"))
        {
            words.remove(0);
        }
        while let Some(first) = words.first() {
            let Some((name, value)) = assignment(&first.text) else {
                break;
            };
            if words.len() == 1 {
                let value_words: Vec<Word> = shell::simple_commands(shell::tokenize(value))
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                if self.resolver.resolve(&value_words).is_some() {
                    self.aliases.insert(name.to_owned(), value_words);
                }
                return;
            }
            words.remove(0);
        }
        // Substitute an alias in first position.
        if let Some(first) = words.first()
            && let Some(var) = variable_name(&first.text)
            && let Some(expansion) = self.aliases.get(var)
        {
            let mut w = expansion.clone();
            w.extend(words.drain(1..));
            words = w;
        }
        let Some((program, at)) = self.resolver.resolve(&words) else {
            return;
        };
        let rest = &words[at..];
        let n = rest
            .iter()
            .take(MAX_WORDS)
            .enumerate()
            .take_while(|(i, w)| is_command_word(w) && (*i == 0 || !looks_like_value(&w.text)))
            .count();
        if n == 0 || EXCLUDED_FIRST_WORDS.contains(&rest[0].text.as_str()) {
            return;
        }
        self.invocations.push(Invocation {
            program,
            words: rest[..n].iter().map(|w| w.text.clone()).collect(),
            rest: rest[n..].to_vec(),
            line: c.line,
            section: c.section.clone(),
            description: c.description.clone(),
        });
    }

    fn finish(mut self) -> Extraction {
        let mut groups: BTreeMap<(Program, Vec<String>), Vec<usize>> = BTreeMap::new();
        let mut order = Vec::new();
        for (i, inv) in self.invocations.iter().enumerate() {
            let key = (inv.program.clone(), inv.words.clone());
            let e = groups.entry(key.clone()).or_default();
            if e.is_empty() {
                order.push(key);
            }
            e.push(i);
        }
        for key in order {
            let idx = &groups[&key];
            let invs: Vec<&Invocation> = idx.iter().map(|&i| &self.invocations[i]).collect();
            let first = invs[0];
            self.out.push(SubCommand {
                words: key.1.clone(),
                program: key.0.clone(),
                args: merge_args(&invs.iter().map(|i| i.rest.as_slice()).collect::<Vec<_>>()),
                source_section: first.section.clone(),
                line: first.line,
                invocations: u32::try_from(invs.len()).unwrap_or(u32::MAX),
                description: invs.iter().find_map(|i| i.description.clone()),
            });
        }
        Extraction { subcommands: self.out }
    }
}
