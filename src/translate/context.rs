//! What a skill says about itself, for naming its commands: the provider word, its domains
//! and its default object (issue 12: "a default object per skill, inferred from its
//! title/description with the evidence shown, and declarable").

use crate::vocab::Vocabulary;

/// What naming knows about one skill.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkillInfo<'a> {
    /// The frontmatter `name`.
    pub name: Option<&'a str>,
    /// The folder name.
    pub dir_name: &'a str,
    /// The body's first level-1 heading.
    pub title: Option<&'a str>,
    /// The frontmatter `description`.
    pub description: Option<&'a str>,
    /// `metadata.skillc-object`, or the project's `translations.toml` `[[skill]] object`.
    pub declared_object: Option<&'a str>,
}

/// The default object of a skill and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultObject {
    /// The canonical object.
    pub object: String,
    /// Where it comes from: `declared in metadata.skillc-object`, or the words that named it
    /// (`description: "tasks" ×3; name: "todoist" (domain tasks)`).
    pub evidence: String,
}

/// The naming context of a skill.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// The provider word (`google_workspace`), when one can be formed.
    pub provider: Option<String>,
    /// The skill's domains, strongest first (`tasks`).
    pub domains: Vec<String>,
    /// The default object.
    pub object: Option<DefaultObject>,
    /// Words of the skill's name and folder: context, never a reason to reject.
    pub own_words: Vec<String>,
}

/// The provider word of a skill: its name normalised (lowercase ASCII words joined by `_`:
/// `Better Polymarket` → `better_polymarket`, `voice.ai-voice-agents` →
/// `voice_ai_voice_agents`), else its folder name normalised; `None` when neither has an
/// ASCII letter or digit.
pub fn provider_for(name: Option<&str>, dir_name: &str) -> Option<String> {
    let norm = |s: &str| {
        let lower = s.to_ascii_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let ascii_only = s.is_ascii();
        (!words.is_empty() && ascii_only).then(|| words.join("_"))
    };
    name.and_then(norm).or_else(|| norm(dir_name))
}

/// Lowercase words of a text, with their position (`Todoist CLI` → `todoist`, `cli`).
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .map(|w| w.trim_matches('-').to_ascii_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Generic nouns a description uses about itself ("this skill", "the user", "the agent"):
/// not evidence of what the commands act on, in the singular after an article.
fn self_reference(prev: Option<&str>, word: &str) -> bool {
    // "skill" in the singular is what every skill calls itself.
    word == "skill"
        || matches!(prev, Some("this" | "the" | "a" | "an" | "your" | "any" | "each"))
            && matches!(
                word,
                "user" | "agent" | "tool" | "assistant" | "api" | "cli" | "command" | "bot"
            )
}

/// How the evidence of a service or brand word is marked (`name `notion` (domain notes)`).
const DOMAIN_EVIDENCE: &str = " (domain ";

/// The naming context of a skill (pure). The default object is the best-scored object of
/// the name, title and description (at least 3), among the objects that a word of the
/// object itself scored: one that only service or brand words scored (`hyperliquid` → the
/// finance domain's accounts) is none.
pub fn skill_context(info: &SkillInfo<'_>, vocab: &Vocabulary) -> Context {
    let provider = provider_for(info.name, info.dir_name);
    let mut own_words: Vec<String> = Vec::new();
    for w in info.name.into_iter().chain([info.dir_name]).flat_map(words) {
        for part in std::iter::once(w.clone()).chain(w.split('-').map(str::to_owned)) {
            if !part.is_empty() && !own_words.contains(&part) {
                own_words.push(part);
            }
        }
    }
    // Scores: (object or domain, weight, where). The name weighs most, then the title, the
    // description's first sentence, the rest of the description.
    let description = info.description.unwrap_or("");
    let (first, rest) = description.split_once(". ").unwrap_or((description, ""));
    let sources: [(&str, u32, &str); 5] = [
        (info.name.unwrap_or(""), 3, "name"),
        (if info.name.is_none() { info.dir_name } else { "" }, 3, "folder"),
        (info.title.unwrap_or(""), 2, "title"),
        (first, 2, "description"),
        (rest, 1, "description"),
    ];
    let mut objects: Vec<(String, u32, Vec<String>)> = Vec::new();
    let mut domains: Vec<(String, u32)> = Vec::new();
    let bump = |list: &mut Vec<(String, u32, Vec<String>)>, name: &str, w: u32, why: String| match list
        .iter_mut()
        .find(|(n, _, _)| n == name)
    {
        Some(e) => {
            e.1 += w;
            if !e.2.contains(&why) {
                e.2.push(why);
            }
        }
        None => list.push((name.to_owned(), w, vec![why])),
    };
    // The head of a compound name is its last word (`venue-templates` is about templates).
    let head = info
        .name
        .or(Some(info.dir_name))
        .and_then(|n| words(n).last().and_then(|w| w.rsplit('-').next().map(str::to_owned)));
    if let Some(o) = head.as_deref().and_then(|h| vocab.object(h)) {
        objects.push((
            o.name().to_owned(),
            2,
            vec![format!("the name's head `{}`", head.as_deref().unwrap_or(""))],
        ));
    }
    for (text, weight, place) in sources {
        let ws = words(text);
        // A noun before another object noun only says which kind (`agent skills` are skills,
        // `task lists` are lists).
        let modifier = |i: usize, part: &str| {
            part == ws[i] && ws.get(i + 1).is_some_and(|n| n != "skill" && vocab.object(n).is_some())
        };
        for (i, w) in ws.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| ws[p].as_str());
            for part in std::iter::once(w.as_str()).chain(w.split('-').filter(|_| w.contains('-'))) {
                if self_reference(prev, part) {
                    continue;
                }
                if let Some(d) = vocab.domain(part) {
                    match domains.iter_mut().find(|(n, _)| n == d.name()) {
                        Some(e) => e.1 += weight,
                        None => domains.push((d.name().to_owned(), weight)),
                    }
                    // A service word says less about the object than the object's own word.
                    if let Some(o) = vocab.domains.get(d.name()).and_then(|d| d.object.as_deref()) {
                        bump(
                            &mut objects,
                            o,
                            weight.div_ceil(2),
                            format!("{place} `{part}`{DOMAIN_EVIDENCE}{})", d.name()),
                        );
                    }
                } else if let Some(o) = vocab.object(part) {
                    if modifier(i, part) {
                        continue;
                    }
                    bump(&mut objects, o.name(), weight, format!("{place} `{part}`"));
                    if let Some(d) = vocab.objects.get(o.name()).and_then(|o| o.domain.as_deref()) {
                        match domains.iter_mut().find(|(n, _)| n == d) {
                            Some(e) => e.1 += 1,
                            None => domains.push((d.to_owned(), 1)),
                        }
                    }
                }
            }
        }
    }
    domains.sort_by_key(|d| std::cmp::Reverse(d.1));
    let object = match info.declared_object.and_then(|o| vocab.object(o)) {
        Some(m) => Some(DefaultObject {
            object: m.name().to_owned(),
            evidence: "declared by the skill".to_owned(),
        }),
        None => {
            // Stable: the first of the best-scored objects in reading order.
            let best = objects.iter().map(|(_, s, _)| *s).max().unwrap_or(0);
            // Service and brand words set the domain, they do not force an object (issue 12:
            // `clawhub logout` is not about agents): an object only service words scored is
            // no default object. Measured (BENCHMARKS.md, issue 12): of the truth set's names
            // that took such an object, 1 was right and 6 wrong (all of the held-out part).
            objects
                .iter()
                .filter(|(_, _, why)| why.iter().any(|w| !w.contains(DOMAIN_EVIDENCE)))
                .find(|(_, s, _)| *s == best && best >= 3)
                .map(|(o, s, why)| DefaultObject {
                    object: o.clone(),
                    evidence: format!("{} (score {s})", why.join(", ")),
                })
        }
    };
    Context {
        provider,
        domains: domains.into_iter().map(|(d, _)| d).collect(),
        object,
        own_words,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_normalised() {
        assert_eq!(
            provider_for(Some("google-workspace"), "x").as_deref(),
            Some("google_workspace")
        );
        assert_eq!(
            provider_for(Some("Better Polymarket"), "x").as_deref(),
            Some("better_polymarket")
        );
        assert_eq!(
            provider_for(Some("voice.ai-voice-agents"), "x").as_deref(),
            Some("voice_ai_voice_agents")
        );
        assert_eq!(provider_for(Some("天气"), "weather-cn").as_deref(), Some("weather_cn"));
        assert_eq!(provider_for(None, "天气"), None);
    }

    #[test]
    fn the_default_object_comes_from_the_description_with_evidence() {
        let v = crate::vocab::builtin();
        let info = SkillInfo {
            name: Some("todoist"),
            dir_name: "todoist",
            title: Some("Todoist CLI"),
            description: Some("Manage Todoist tasks and projects. Add tasks, complete tasks."),
            declared_object: None,
        };
        let ctx = skill_context(&info, v);
        let o = ctx.object.expect("an object");
        assert_eq!(o.object, "tasks");
        assert!(o.evidence.contains("description `tasks`"), "{}", o.evidence);
        assert_eq!(ctx.domains.first().map(String::as_str), Some("tasks"));
        let declared = SkillInfo {
            declared_object: Some("projects"),
            ..info
        };
        assert_eq!(
            skill_context(&declared, v).object.map(|o| o.object).as_deref(),
            Some("projects")
        );
    }
}
