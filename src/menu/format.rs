//! The menu's output formats (RUNTIME.md §1, "Output"): `json`, `xml` (the `<available_skills>`
//! block of `to-prompt`), and the `load_playbook` tool in the Anthropic and OpenAI tool
//! formats. Every rendering is a pure function of the selection: keys sorted, no time, so an
//! identical turn, catalog and settings give identical bytes (prompt caches rely on it).

use serde_json::{Value, json};

use super::select::{Item, Matched, Selection};
use crate::messages::menu::{MatchedFeature, MenuDoc, MenuEntry};
use crate::util::sorted_json;

/// The tool's name.
pub const TOOL: &str = "load_playbook";

/// What the tool says it does.
pub const TOOL_DESCRIPTION: &str = "Load the playbook of one of the skills offered for this turn: its full \
instructions (the SKILL.md body), returned verbatim. Call it before acting on that skill. A loaded playbook \
stays in context for the rest of the run; do not summarise or drop it.";

/// The tool formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// `{"name", "description", "parameters"}`: a plain JSON-Schema function (in `json`).
    Plain,
    /// Anthropic Messages API: `{"name", "description", "input_schema"}`.
    Anthropic,
    /// OpenAI Chat Completions / Responses: `{"type": "function", "function": {…, "strict": true}}`.
    OpenAi,
}

/// The argument schema: `slug`, an enum of exactly the menu's slugs; nothing else accepted.
fn schema(items: &[Item]) -> Value {
    let slugs: Vec<&str> = items.iter().map(|i| i.slug.as_str()).collect();
    let offered: Vec<String> = items
        .iter()
        .map(|i| format!("{} ({}): {}", i.slug, i.title, i.description))
        .collect();
    json!({
        "type": "object",
        "properties": {
            "slug": {
                "type": "string",
                "enum": slugs,
                "description": format!("The skill to load, one of: {}", offered.join("; ")),
            }
        },
        "required": ["slug"],
        "additionalProperties": false,
    })
}

/// The `load_playbook` tool for a menu, or `None` when the menu is empty (no tool offered).
pub fn tool(items: &[Item], format: ToolFormat) -> Option<Value> {
    if items.is_empty() {
        return None;
    }
    let s = schema(items);
    Some(match format {
        ToolFormat::Plain => json!({"name": TOOL, "description": TOOL_DESCRIPTION, "parameters": s}),
        ToolFormat::Anthropic => json!({"name": TOOL, "description": TOOL_DESCRIPTION, "input_schema": s}),
        ToolFormat::OpenAi => json!({
            "type": "function",
            "function": {"name": TOOL, "description": TOOL_DESCRIPTION, "parameters": s, "strict": true},
        }),
    })
}

/// Pretty JSON with sorted keys and a final line break.
pub fn pretty(v: Value) -> String {
    let mut s = serde_json::to_string_pretty(&sorted_json(v)).unwrap_or_default();
    s.push('\n');
    s
}

/// The `json` document: `{"menu": [{slug, title, description, pass, score}], "tool",
/// "embedder", "recipe", "threshold", "warnings"}`; with `explain`, each entry also has
/// `triggers` (those that matched) and `matched` (features and their contributions).
pub fn json_doc(sel: &Selection, explain: Option<&[Vec<Matched>]>) -> Value {
    let menu = sel
        .items
        .iter()
        .enumerate()
        .map(|(k, i)| MenuEntry {
            slug: i.slug.clone(),
            title: i.title.clone(),
            description: i.description.clone(),
            pass: i.pass.as_str(),
            score: i.score,
            triggers: explain.map(|_| i.triggers.clone()),
            matched: explain.map(|e| {
                e.get(k)
                    .into_iter()
                    .flatten()
                    .map(|m| MatchedFeature {
                        feature: m.feature.clone(),
                        contribution: m.contribution,
                    })
                    .collect()
            }),
        })
        .collect();
    let doc = MenuDoc {
        menu,
        tool: tool(&sel.items, ToolFormat::Plain),
        embedder: sel.embedder.clone(),
        recipe: sel.recipe.clone(),
        threshold: sel.threshold,
        warnings: sel.warnings.clone(),
    };
    serde_json::to_value(doc).unwrap_or(Value::Null)
}

/// Escapes `& < > " '` as Python's `html.escape(quote=True)` does, and replaces control
/// characters XML 1.0 forbids (what `to-prompt` prints).
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#x27;"),
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

/// The `<available_skills>` block of `to-prompt` for `(name, description, location)`.
pub fn available_skills<'a>(skills: impl IntoIterator<Item = (&'a str, &'a str, String)>) -> String {
    let mut lines = vec!["<available_skills>".to_owned()];
    for (name, description, location) in skills {
        lines.extend([
            "<skill>".into(),
            "<name>".into(),
            xml_escape(name),
            "</name>".into(),
            "<description>".into(),
            xml_escape(description),
            "</description>".into(),
            "<location>".into(),
            xml_escape(&location),
            "</location>".into(),
            "</skill>".into(),
        ]);
    }
    lines.push("</available_skills>".into());
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// A human-readable explanation of a selection: one block per skill with its pass, score,
/// the triggers and the features that matched.
pub fn explain_text(sel: &Selection, matched: &[Vec<Matched>]) -> String {
    let mut s = format!(
        "embedder {} (recipe {}), threshold {}\n",
        sel.embedder,
        sel.recipe,
        sel.threshold.map_or("none".to_owned(), |t| format!("{t:.4}"))
    );
    if sel.items.is_empty() {
        s.push_str("no skill offered\n");
    }
    for (k, i) in sel.items.iter().enumerate() {
        s.push_str(&format!(
            "{}. {}  {}  score {:.4}\n",
            k + 1,
            i.slug,
            i.pass.as_str(),
            i.score
        ));
        if !i.triggers.is_empty() {
            s.push_str(&format!("   triggers: {}\n", i.triggers.join(", ")));
        }
        let m = matched.get(k).map(Vec::as_slice).unwrap_or_default();
        if !m.is_empty() {
            let shown: Vec<String> = m
                .iter()
                .take(10)
                .map(|m| format!("{} {:.4}", m.feature, m.contribution))
                .collect();
            s.push_str(&format!("   features: {}\n", shown.join(", ")));
        }
    }
    s
}
