//! Sub-command words versus values (PRODUCT.md, "Sub-commands"): the sub-command is the run of
//! leading plain words before the first flag, placeholder or value, and "a word that varies
//! across invocations, or sits where another invocation has a `<placeholder>`, is an
//! argument". Values are told by their shape (numbers, ids, slugs such as `my-api`), by a
//! placeholder at the same place in another line, by following a verb (`services add netflix`:
//! after `add` comes what is added), and by varying among unknown words
//! (`mood exciting`, `mood relaxing`).

use super::model::MAX_WORDS;
use super::shell::Word;
use crate::vocab;

/// Words that read as values, not commands, after the first: ids and slugs such as
/// `cora-web-1`, `cnv_abc123`, `grp_xxx` (an underscore, or a digit with a separator), ids
/// with three or more digits (`abc123`), and example values (`my-api`, `your-repo`).
pub(super) fn looks_like_value(t: &str) -> bool {
    let digits = t.chars().filter(char::is_ascii_digit).count();
    t.contains('_')
        || (digits > 0 && t.contains('-'))
        || digits >= 3
        || ["my-", "your-", "example-", "sample-", "some-", "test-"]
            .iter()
            .any(|p| t.starts_with(p))
        || (t.len() > 8 && (t.starts_with("your") || t.starts_with("example")))
        || matches!(t, "foo" | "bar" | "baz" | "qux" | "xxx" | "xyz" | "abc")
}

/// A plain lowercase word that can be part of a sub-command (`search`, `create-folder`), or a
/// short digit-first word (`1rm`, `2fa`, `3d`).
pub(super) fn is_command_word(w: &Word) -> bool {
    let t = w.text.as_str();
    let plain = t
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    // Letters after the digits, two or more and not a unit: `1rm`, `2fa`, not `30m`, `7d`, `2h`.
    let letters = t.trim_start_matches(|c: char| c.is_ascii_digit());
    let digit_first = t.starts_with(|c: char| c.is_ascii_digit())
        && t.len() <= 5
        && letters.len() >= 2
        && letters.chars().all(|c| c.is_ascii_lowercase())
        && !matches!(
            letters,
            "ms" | "hr" | "hrs" | "mo" | "min" | "kb" | "mb" | "gb" | "px" | "st" | "nd" | "rd" | "th"
        );
    !w.quoted
        && t.len() <= 32
        && plain
        && (t.starts_with(|c: char| c.is_ascii_lowercase()) || digit_first)
        && !t.ends_with('-')
        && !t.contains("--")
}

/// A placeholder standing for a sub-command, not a value (`<command>`, `COMMAND`, `[cmd]`).
pub(super) fn is_command_placeholder(w: &Word) -> bool {
    let t = w
        .text
        .trim_matches(|c| matches!(c, '<' | '>' | '[' | ']' | '{' | '}'))
        .trim_end_matches("...")
        .to_ascii_lowercase();
    let t = t.trim_end_matches(['s', '.']);
    matches!(
        t.replace(['-', '_', ' '], "").as_str(),
        "command" | "cmd" | "subcommand" | "subcmd" | "action" | "commandname" | "verb" | "operation" | "op" | "method"
    )
}

/// Whether a word is a placeholder or a written value (quoted, numeric, a path, a flag value):
/// what another line may show where this line has a plain word.
fn is_value_slot(w: &Word) -> bool {
    if is_command_placeholder(w) {
        return false;
    }
    let t = w.text.as_str();
    w.quoted
        || (t.starts_with('<') && t.ends_with('>'))
        || (t.starts_with('{') && t.ends_with('}'))
        || (t.starts_with('[') && !t.starts_with("[-"))
        || (t.starts_with(|c: char| c.is_ascii_uppercase())
            && t.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        || t.parse::<f64>().is_ok()
        || t.starts_with('$')
}

/// How many leading words of `args` are sub-command words, by shape alone.
pub(super) fn lead_words(args: &[Word]) -> usize {
    args.iter()
        .take(MAX_WORDS)
        .enumerate()
        .take_while(|(i, w)| is_command_word(w) && (*i == 0 || !looks_like_value(&w.text)))
        .count()
}

/// One command line of a program, its arguments after the program and how many of them are
/// sub-command words.
pub(super) struct Split {
    /// Which program runs it (lines of one program are compared with each other).
    pub(super) group: usize,
    /// Every word after the program.
    pub(super) args: Vec<Word>,
    /// The leading words that form the sub-command.
    pub(super) n: usize,
}

impl Split {
    fn words(&self) -> &[Word] {
        &self.args[..self.n]
    }
}

/// Shortens sub-commands whose trailing words are values (see the module documentation).
/// `usage` holds the other command lines of the skill that name no program of it (a table of
/// `/stream services add <name>`), first word dropped.
pub(super) fn settle(lines: &mut [Split], usage: &[Vec<Word>]) {
    let lexicon = vocab::builtin();
    // Command words: actions, objects, qualifiers (a brand after a verb is a value:
    // `services add netflix`).
    let word = |w: &str| lexicon.action(w).is_some() || lexicon.object(w).is_some() || lexicon.qualifier(w).is_some();
    let known = |w: &str| word(w) || w.split(['-', '_']).all(word);
    let verb = |w: &str| lexicon.action(w).is_some();
    // `create-group`, `add-member`: a verb joined to its object.
    let compound_verb = |w: &str| w.split_once('-').is_some_and(|(v, o)| verb(v) && !o.is_empty());
    let cuts: Vec<usize> = (0..lines.len())
        .map(|i| {
            let words = lines[i].words();
            (1..words.len())
                .find(|&k| {
                    let prefix = &words[..k];
                    let w = &words[k].text;
                    let same_prefix = |other: &[Word]| {
                        other.len() > k && other[..k].iter().zip(prefix).all(|(a, b)| a.text == b.text)
                    };
                    // A placeholder or value where this line has a word.
                    let slot = lines
                        .iter()
                        .filter(|o| o.group == lines[i].group)
                        .map(|o| o.args.as_slice())
                        .chain(usage.iter().map(Vec::as_slice))
                        .any(|o| same_prefix(o) && is_value_slot(&o[k]));
                    // After a verb comes its object: an unknown word there is a value, when the
                    // verb follows another word or the word follows several verbs.
                    let prev = words[k - 1].text.as_str();
                    let verb_object = k >= 2 && verb(&words[k - 2].text) && lexicon.object(prev).is_some();
                    let after_verb = !known(w) && (compound_verb(prev) || verb_object)
                        || verb(prev)
                            && !known(w)
                            && (k >= 2
                                || lines.iter().any(|o| {
                                    o.group == lines[i].group
                                        && o.n > k
                                        && o.words()[k].text == *w
                                        && o.words()[k - 1].text != words[k - 1].text
                                        && verb(&o.words()[k - 1].text)
                                }));
                    // Unknown words that vary under one prefix, with no known word beside them.
                    let siblings: Vec<&str> = lines
                        .iter()
                        .filter(|o| o.group == lines[i].group && same_prefix(o.words()))
                        .map(|o| o.words()[k].text.as_str())
                        .collect();
                    let varies = !known(w) && siblings.iter().any(|s| s != w) && siblings.iter().all(|s| !known(s));
                    // The same unknown word after different first words is a reused example
                    // value (`posts wallstreetbets`, `search wallstreetbets`).
                    let reused = !known(w)
                        && lines.iter().any(|o| {
                            o.group == lines[i].group
                                && o.n > k
                                && o.words()[k].text == *w
                                && o.words()[..k].iter().zip(prefix).any(|(a, b)| a.text != b.text)
                        });
                    slot || after_verb || varies || reused
                })
                .unwrap_or(words.len())
        })
        .collect();
    for (line, cut) in lines.iter_mut().zip(cuts) {
        line.n = cut;
    }
    // First words that all vary and none of which is a command word are values of a
    // single-purpose program (`fetch_events.py bengaluru`, `fetch_events.py new-york`).
    let groups: Vec<usize> = {
        let mut g: Vec<usize> = lines.iter().map(|l| l.group).collect();
        g.sort_unstable();
        g.dedup();
        g
    };
    for g in groups {
        let firsts: Vec<&str> = lines
            .iter()
            .filter(|l| l.group == g && l.n > 0)
            .map(|l| l.args[0].text.as_str())
            .collect();
        let distinct = {
            let mut d = firsts.clone();
            d.sort_unstable();
            d.dedup();
            d.len()
        };
        if distinct >= 2 && firsts.iter().all(|w| !known(w)) {
            for l in lines.iter_mut().filter(|l| l.group == g) {
                l.n = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::shell;

    fn split(group: usize, line: &str) -> Split {
        let args = shell::simple_commands(shell::tokenize(line))
            .into_iter()
            .next()
            .unwrap_or_default();
        let n = lead_words(&args);
        Split { group, args, n }
    }

    fn settled(lines: &[&str], usage: &[&str]) -> Vec<String> {
        let mut s: Vec<Split> = lines.iter().map(|l| split(0, l)).collect();
        let u: Vec<Vec<Word>> = usage.iter().map(|l| split(1, l).args).collect();
        settle(&mut s, &u);
        s.iter()
            .map(|l| l.words().iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
            .collect()
    }

    #[test]
    fn shapes() {
        assert!(looks_like_value("my-api"));
        assert!(looks_like_value("abc123"));
        assert!(!looks_like_value("create-folder"));
        let w = |t: &str| Word {
            text: t.into(),
            quoted: false,
        };
        assert!(is_command_word(&w("1rm")));
        assert!(!is_command_word(&w("95396")));
        assert!(is_command_placeholder(&w("<command>")));
        assert!(is_command_placeholder(&w("COMMAND")));
        assert!(!is_command_placeholder(&w("<name>")));
    }

    #[test]
    fn values_after_verbs_and_beside_placeholders_are_arguments() {
        assert_eq!(
            settled(
                &[
                    "services add netflix",
                    "services remove netflix",
                    "services list",
                    "gmail drafts create"
                ],
                &[]
            ),
            vec![
                "services add",
                "services remove",
                "services list",
                "gmail drafts create"
            ]
        );
        assert_eq!(settled(&["labels add work"], &[]), vec!["labels add"]);
        assert_eq!(
            settled(&["mood exciting", "mood relaxing tv"], &[]),
            vec!["mood", "mood"]
        );
        assert_eq!(settled(&["stats prod"], &["stats <api>"]), vec!["stats"]);
        assert_eq!(
            settled(&["workers sync trigger", "workers sync pause"], &[]),
            vec!["workers sync trigger", "workers sync pause"]
        );
        assert_eq!(
            settled(&["gmail search", "gmail send"], &["<command> [args]"]),
            vec!["gmail search", "gmail send"]
        );
    }
}
