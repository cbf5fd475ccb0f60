//! A small POSIX-shell word splitter that remembers how each word was written.
//!
//! Extraction needs what a generic splitter (`shlex`) throws away: whether a word was quoted
//! (a quoted word is a value, never a sub-command) and where the operators are (`|`, `&&`,
//! `;`, redirections) so that only the first simple command of a pipeline is read. Markdown
//! placeholders such as `<calendarId>` are words here, not redirections.

/// A shell word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal.
    pub text: String,
    /// Any part of it was quoted.
    pub quoted: bool,
}

/// A token of a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A word.
    Word(Word),
    /// A control operator ending a simple command: `|`, `||`, `&&`, `;`, `&`.
    Separator,
    /// A redirection (`>`, `2>&1`, `<<EOF`, …); the word after it is its target.
    Redirect(String),
}

/// A Markdown placeholder starting at `i`: `<name>`, `<@handle>`, `<a b>`, `<activity 1-5>`.
/// Any characters but `<`, `>` and quotes, not starting or ending with a blank (`< in > out`
/// are redirections), at most 48 characters, closed on the line; returns the end.
fn is_placeholder_at(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i) != Some(&'<') {
        return None;
    }
    let first = *chars.get(i + 1)?;
    if first.is_whitespace() || matches!(first, '<' | '>' | '&' | '(' | '-' | '=') {
        return None;
    }
    let mut j = i + 1;
    while j < chars.len() && j - i <= 48 && !matches!(chars[j], '<' | '>' | '\'' | '"' | '\n') {
        j += 1;
    }
    let closed = chars.get(j) == Some(&'>') && !chars[j - 1].is_whitespace();
    // What follows the `>` must end the word: a blank, the end, or usage punctuation.
    let ends = chars
        .get(j + 1)
        .is_none_or(|c| c.is_whitespace() || matches!(c, ']' | '.' | ',' | ')' | '|' | '}' | '=' | ';' | ':'));
    (closed && ends).then_some(j + 1)
}

/// Splits one command line (continuations already joined) into tokens. Stops at a `#`
/// comment. Never fails: unbalanced quotes end at the end of the line.
pub fn tokenize(line: &str) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let flush = |out: &mut Vec<Token>, cur: &mut String, quoted: &mut bool, in_word: &mut bool| {
        if *in_word {
            out.push(Token::Word(Word {
                text: std::mem::take(cur),
                quoted: *quoted,
            }));
        }
        *quoted = false;
        *in_word = false;
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                flush(&mut out, &mut cur, &mut quoted, &mut in_word);
                i += 1;
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                quoted = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    cur.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                quoted = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() && matches!(chars[i + 1], '"' | '\\' | '$' | '`') {
                        i += 1;
                    }
                    cur.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '\\' => {
                in_word = true;
                if let Some(&n) = chars.get(i + 1) {
                    cur.push(n);
                }
                i += 2;
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                // Command substitution: keep it inside the current word, balanced.
                in_word = true;
                let mut depth = 0;
                while i < chars.len() {
                    cur.push(chars[i]);
                    match chars[i] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            '<' if is_placeholder_at(&chars, i).is_some() => {
                let end = is_placeholder_at(&chars, i).unwrap_or(i + 1);
                in_word = true;
                cur.extend(&chars[i..end]);
                i = end;
            }
            '|' | '&' | ';' | '(' | ')' => {
                flush(&mut out, &mut cur, &mut quoted, &mut in_word);
                if c == '&' && chars.get(i + 1) == Some(&'>') {
                    out.push(Token::Redirect("&>".into()));
                    i += 2;
                    continue;
                }
                out.push(Token::Separator);
                i += if chars.get(i + 1) == Some(&c) { 2 } else { 1 };
            }
            '>' | '<' => {
                // A redirection; a leading fd number belongs to it (`2>&1`).
                let fd = if in_word && cur.chars().all(|d| d.is_ascii_digit()) && !quoted {
                    in_word = false;
                    std::mem::take(&mut cur)
                } else {
                    flush(&mut out, &mut cur, &mut quoted, &mut in_word);
                    String::new()
                };
                let mut op = fd;
                while i < chars.len() && matches!(chars[i], '>' | '<' | '&' | '-') {
                    op.push(chars[i]);
                    i += 1;
                }
                out.push(Token::Redirect(op));
            }
            _ => {
                in_word = true;
                cur.push(c);
                i += 1;
            }
        }
    }
    flush(&mut out, &mut cur, &mut quoted, &mut in_word);
    out
}

/// Splits tokens into simple commands (separated by `|`, `&&`, `;`, …), dropping
/// redirections and their targets.
pub fn simple_commands(tokens: Vec<Token>) -> Vec<Vec<Word>> {
    let mut out = vec![Vec::new()];
    let mut skip_next = false;
    for t in tokens {
        match t {
            Token::Separator => out.push(Vec::new()),
            Token::Redirect(op) => {
                // `2>&1` carries its target; others take the next word.
                skip_next = !op.ends_with("&1") && !op.ends_with("&2") && op != "&>";
                if op == "&>" {
                    skip_next = true;
                }
            }
            Token::Word(w) => {
                if std::mem::take(&mut skip_next) {
                    continue;
                }
                if let Some(last) = out.last_mut() {
                    last.push(w);
                }
            }
        }
    }
    out.retain(|c| !c.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<(String, bool)>> {
        simple_commands(tokenize(line))
            .into_iter()
            .map(|c| c.into_iter().map(|w| (w.text, w.quoted)).collect())
            .collect()
    }

    #[test]
    fn quotes_and_operators() {
        let w = words(r#"$GAPI gmail search "is:unread" --max 10 | jq '.[0]' > out.json 2>&1"#);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0][3], ("is:unread".to_string(), true));
        assert_eq!(w[0].len(), 6);
        assert_eq!(w[1], vec![("jq".to_string(), false), (".[0]".to_string(), true)]);
    }

    #[test]
    fn placeholders_are_words() {
        let w = words("gog calendar events <calendarId> --from <iso> --to <iso>");
        assert_eq!(w[0][3].0, "<calendarId>");
        assert_eq!(w[0].len(), 8);
        let w = words("calc tdee <M|F> <activity 1-5> <@handle> <a b>... < in.txt > out.txt");
        let texts: Vec<&str> = w[0].iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            texts,
            vec!["calc", "tdee", "<M|F>", "<activity 1-5>", "<@handle>", "<a b>..."]
        );
    }

    #[test]
    fn comments_and_substitutions() {
        let w = words("tool run $(date +%s) # trailing comment");
        assert_eq!(
            w[0].iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            vec!["tool", "run", "$(date +%s)"]
        );
        assert!(words("# only a comment").is_empty());
    }

    #[test]
    fn heredoc_marker_is_a_redirect() {
        let w = words("gog gmail send --body-file - <<'EOF'");
        assert_eq!(w[0].last().map(|x| x.0.as_str()), Some("-"));
    }
}
