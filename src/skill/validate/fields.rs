//! The standard fields of a SKILL.md frontmatter: `name`, `description` and the other
//! specification fields, hidden Unicode in values, YAML 1.1 surprises, `allowed-tools`.

use super::*;

impl Validator<'_, '_> {
    pub(super) fn check_name(&mut self, root: &Node) {
        let Some(e) = root.get("name") else {
            let d = self
                .diag(&rules::SK020, &(0..0), "missing required field `name`")
                .help("add `name: <folder-name>` to the frontmatter");
            let d = Diagnostic {
                span: self.src.span(root.span.start..root.span.start),
                ..d
            };
            self.push(d);
            return;
        };
        let span = e.value.span.clone();
        let raw = match e.value.as_str() {
            Some(s) if !s.trim().is_empty() => s,
            _ => {
                let found = if e.value.as_str().is_some() {
                    "it is empty".to_owned()
                } else {
                    format!("found {}", e.value.describe())
                };
                let d = self.diag(
                    &rules::SK021,
                    &span,
                    format!("`name` must be a non-empty string, {found}"),
                );
                let span = if span.is_empty() { e.key_span.clone() } else { span };
                let d = Diagnostic {
                    span: self.src.span(span),
                    ..d
                };
                self.push(d);
                return;
            }
        };
        self.yaml11_warning("name", &e.value);
        let name: String = raw.trim().nfkc().collect();
        let chars = name.chars().count();
        if chars > MAX_NAME_CHARS {
            let d = self
                .diag(
                    &rules::SK022,
                    &span,
                    format!("skill name `{name}` is {chars} characters; the limit is {MAX_NAME_CHARS}"),
                )
                .help("shorten the name (and rename the folder to match)");
            self.push(d);
        }
        if name != name.to_lowercase() {
            // The suggestion must pass the other name rules too (`Bad_Name` → `bad-name`, not
            // `bad_name`, which SK026 refuses).
            let lower: String = name
                .to_lowercase()
                .chars()
                .map(|c| if c.is_alphanumeric() { c } else { '-' })
                .collect();
            let suggested = lower.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-");
            let d = self
                .diag(&rules::SK023, &span, format!("skill name `{name}` must be lowercase"))
                .help(if self.ctx.dir_name.nfkc().collect::<String>() == suggested {
                    format!("use `{suggested}`, like the folder")
                } else {
                    format!("use `{suggested}` (and rename the folder to match)")
                });
            self.push(d);
        }
        if name.starts_with('-') || name.ends_with('-') {
            let d = self.diag(
                &rules::SK024,
                &span,
                format!("skill name `{name}` starts or ends with a hyphen"),
            );
            self.push(d);
        }
        if name.contains("--") {
            let d = self.diag(
                &rules::SK025,
                &span,
                format!("skill name `{name}` contains consecutive hyphens"),
            );
            self.push(d);
        }
        // Python's `str.isalnum` (the reference): letters and numbers, not combining marks.
        let bad: Vec<char> = name
            .chars()
            .filter(|c| !((c.is_alphanumeric() && !unicode_normalization::char::is_combining_mark(*c)) || *c == '-'))
            .collect();
        if !bad.is_empty() {
            let shown: Vec<String> = dedup_chars(&bad)
                .iter()
                .map(|c| format!("`{}`", c.escape_debug()))
                .collect();
            let d = self
                .diag(
                    &rules::SK026,
                    &span,
                    format!("skill name `{name}` contains invalid characters: {}", shown.join(", ")),
                )
                .help("only letters, digits and single hyphens are allowed, e.g. `pdf-tools`");
            self.push(d);
        }
        let dir: String = self.ctx.dir_name.nfkc().collect();
        if dir != name {
            let d = self
                .diag(
                    &rules::SK027,
                    &span,
                    format!("skill name `{name}` does not match its folder `{}`", self.ctx.dir_name),
                )
                .help(match (name_is_valid(&name), name_is_valid(&dir)) {
                    (true, true) => format!("rename the folder to `{name}` or set `name: {dir}`"),
                    (true, false) => format!("rename the folder to `{name}`"),
                    (false, true) => format!("set `name: {dir}` if that is the skill's name"),
                    (false, false) => "choose a valid name and use it for both the folder and `name`".to_owned(),
                });
            self.push(d);
        }
        self.model.name = Some(Text { value: name, span });
    }

    pub(super) fn check_description(&mut self, root: &Node) {
        let Some(e) = root.get("description") else {
            let d = self
                .diag(
                    &rules::SK028,
                    &(root.span.start..root.span.start),
                    "missing required field `description`",
                )
                .help("add `description:` saying what the skill does and when to use it");
            self.push(d);
            return;
        };
        let span = e.value.span.clone();
        let Some(desc) = e.value.as_str().filter(|s| !s.trim().is_empty()) else {
            let found = if e.value.as_str().is_some() {
                "it is empty".to_owned()
            } else {
                format!("found {}", e.value.describe())
            };
            let span = if span.is_empty() { e.key_span.clone() } else { span };
            let d = self.diag(
                &rules::SK029,
                &span,
                format!("`description` must be a non-empty string, {found}"),
            );
            self.push(d);
            return;
        };
        let n = desc.chars().count();
        if n > MAX_DESCRIPTION_CHARS {
            let d = self
                .diag(
                    &rules::SK030,
                    &span,
                    format!("`description` is {n} characters; the limit is {MAX_DESCRIPTION_CHARS}"),
                )
                .help("keep the trigger signal short; move details into the body");
            self.push(d);
        }
        self.yaml11_warning("description", &e.value);
        self.model.description = Some(Text {
            value: desc.trim().to_owned(),
            span,
        });
    }

    /// `SK012`: a plain scalar in a string field that PyYAML would type differently.
    pub(super) fn yaml11_warning(&mut self, field: &str, node: &Node) {
        let Some(s) = node.as_scalar() else { return };
        let Some(t) = s.pyyaml_type() else { return };
        let d = self
            .diag(
                &rules::SK012,
                &node.span,
                format!(
                    "`{field}` is read as the string \"{}\", but PyYAML reads {}",
                    s.value,
                    t.describe()
                ),
            )
            .help(format!("quote it so every parser agrees: `{field}: \"{}\"`", s.value));
        self.push(d);
    }

    /// `SK037`: a `#` after a tab ends a value (a YAML 1.2 comment: `Does things\t# note` reads
    /// as `Does things`), but PyYAML — what the reference validator and most agents load
    /// frontmatter with — refuses the file. A warning; an error under `--strict`, as the
    /// reference refuses it.
    pub(super) fn check_tab_comments(&mut self, root: &Node) {
        let text = self.src.text;
        let mut found = Vec::new();
        root.for_each_scalar(&mut |_, span| {
            // A quoted scalar's span runs on over the blanks and comment after it: its value
            // ends at its closing quote.
            let end = quoted_end(text, span.start).unwrap_or(span.end);
            let line = text
                .get(end..)
                .unwrap_or_default()
                .split('\n')
                .next()
                .unwrap_or_default();
            let gap = line.len() - line.trim_start_matches([' ', '\t']).len();
            if line[gap..].starts_with('#') && line[..gap].contains('\t') {
                found.push(end + gap);
            }
        });
        for at in found {
            let mut d = self
                .diag(
                    &rules::SK037,
                    &(at..at + 1),
                    "a tab before `#` starts a comment here (YAML 1.2 ends the value before it), but PyYAML refuses the file",
                )
                .help("put a space, not a tab, before a comment's `#`; or quote the value if the `#` belongs to it");
            if self.strict() {
                d = d.severity(Severity::Error);
            }
            self.push(d);
        }
    }

    pub(super) fn check_hidden_unicode(&mut self, root: &Node) {
        let mut found = Vec::new();
        root.for_each_scalar(&mut |value, span| {
            if let Some(c) = value.chars().find(|c| is_hidden(*c)) {
                found.push((c, span.clone()));
            }
        });
        for (c, span) in found {
            // Point at the character itself when it is written literally.
            let at = self.src.text[span.clone()]
                .find(c)
                .map(|i| span.start + i..span.start + i + c.len_utf8())
                .unwrap_or(span);
            let d = self
                .diag(
                    &rules::SK014,
                    &at,
                    format!(
                        "invisible character U+{:04X} ({}) in a frontmatter value",
                        c as u32,
                        hidden_kind(c)
                    ),
                )
                .help("remove it: hidden characters can smuggle instructions past a reviewer");
            self.push(d);
        }
    }

    pub(super) fn check_default_mode_fields(&mut self, root: &Node) {
        if let Some(e) = root.get("license") {
            match e.value.as_str() {
                Some(l) => {
                    self.model.license = Some(Text {
                        value: l.to_owned(),
                        span: e.value.span.clone(),
                    });
                    self.yaml11_warning("license", &e.value);
                }
                None => {
                    let d = self
                        .diag(
                            &rules::SK034,
                            &e.value.span,
                            format!("`license` must be a string, found {}", e.value.describe()),
                        )
                        .help("name one license (e.g. `MIT`) or a file (`Complete terms in LICENSE.txt`)");
                    self.push(d);
                }
            }
        }
        if let Some(e) = root.get("version") {
            match e.value.as_str() {
                Some(v) => {
                    self.model.version = Some(v.to_owned());
                    self.yaml11_warning("version", &e.value);
                }
                None => {
                    let d = self.diag(
                        &rules::SK034,
                        &e.value.span,
                        format!("`version` must be a string, found {}", e.value.describe()),
                    );
                    self.push(d);
                }
            }
        }
        if let Some(e) = root.get("allowed-tools") {
            self.check_allowed_tools(&e.value);
        }
        if let Some(e) = root.get("metadata") {
            self.check_metadata(&e.value);
        }
        self.check_hermes_fields(root);
        for key in ["user-invocable", "disable-model-invocation"] {
            if let Some(e) = root.get(key)
                && e.value.as_scalar().map(|s| s.core_type()) != Some(yaml::ScalarType::Bool)
            {
                let d = self.diag(
                    &rules::SK056,
                    &e.value.span,
                    format!("`{key}` must be true or false, found {}", e.value.describe()),
                );
                self.push(d);
            }
        }
        let mut bins = std::mem::take(&mut self.model.bins);
        bins.sort();
        bins.dedup();
        self.model.bins = bins;
        let mut creds = std::mem::take(&mut self.model.credentials);
        creds.sort();
        creds.dedup_by(|a, b| a.binding == b.binding && a.kind == b.kind);
        self.model.credentials = creds;
    }

    /// `SK019`: `allowed-tools` as a YAML list or with commas, when every entry is well formed
    /// (so that the standard's spelling is known).
    pub(super) fn check_tools_spelling(&mut self, node: &Node) {
        let Some(spelled) = tools::standard_spelling(node) else {
            return;
        };
        let how = if node.as_seq().is_some() {
            "is a YAML list"
        } else {
            "separates its entries with commas"
        };
        let d = self
            .diag(&rules::SK019, &node.span, format!("`allowed-tools` {how}"))
            .help(format!(
                "the standard spells it as one space-separated string: `allowed-tools: {spelled}`"
            ));
        self.push(d);
    }

    pub(super) fn check_allowed_tools(&mut self, node: &Node) {
        let entries: Vec<(String, Range<usize>)> = match &node.kind {
            NodeKind::Scalar(s) => tools::split_entries(&s.value)
                .into_iter()
                .map(|e| (e.to_owned(), node.span.clone()))
                .collect(),
            NodeKind::Seq { items, .. } => {
                let mut out = Vec::new();
                for item in items {
                    match item.as_str() {
                        Some(s) => out.extend(
                            tools::split_entries(s)
                                .into_iter()
                                .map(|e| (e.to_owned(), item.span.clone())),
                        ),
                        None => {
                            let d = self.diag(
                                &rules::SK034,
                                &item.span,
                                format!("an `allowed-tools` entry must be a string, found {}", item.describe()),
                            );
                            self.push(d);
                        }
                    }
                }
                out
            }
            NodeKind::Map { .. } => {
                let d = self
                    .diag(
                        &rules::SK034,
                        &node.span,
                        "`allowed-tools` must be a string or a list, found a mapping",
                    )
                    .help("e.g. `allowed-tools: Bash(git:*) Read`");
                self.push(d);
                return;
            }
        };
        for (entry, span) in entries {
            match tools::parse_token(&entry) {
                Ok(t) => self.model.allowed_tools.push(t),
                Err(why) => {
                    self.model.allowed_tools_malformed.push(entry.trim().to_owned());
                    let d = self
                        .diag(&rules::SK036, &span, format!("malformed `allowed-tools` entry: {why}"))
                        .help("write `Tool` or `Tool(pattern)`, e.g. `Bash(git:*)`");
                    self.push(d);
                }
            }
        }
    }
}

fn dedup_chars(chars: &[char]) -> Vec<char> {
    let mut out: Vec<char> = Vec::new();
    for c in chars {
        if !out.contains(c) {
            out.push(*c);
        }
    }
    out
}

fn hidden_kind(c: char) -> &'static str {
    match c as u32 {
        0xE0000..=0xE007F => "Unicode tag character",
        0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C => "bidirectional control",
        _ => "zero-width character",
    }
}

/// The byte just past the closing quote of the quoted scalar starting at `start` (`"…"` with
/// backslash escapes, `'…'` with `''` for a quote); `None` when `start` opens no quote.
fn quoted_end(text: &str, start: usize) -> Option<usize> {
    let rest = text.get(start..)?;
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let mut chars = rest.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        if q == '"' && c == '\\' {
            chars.next();
        } else if c == q {
            if q == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                chars.next();
                continue;
            }
            return Some(start + i + 1);
        }
    }
    None
}
