//! The vendor namespaces under `metadata`: GAIA (`metadata.gaia`), OpenClaw and its former
//! names, Hermes (its top-level keys and `metadata.hermes`); what they declare becomes part of
//! the model (permissions, tools, credentials).

use super::*;

impl Validator<'_, '_> {
    pub(super) fn check_metadata(&mut self, node: &Node) {
        // `metadata:` with nothing after it is an empty mapping, not a type error.
        if node
            .as_scalar()
            .is_some_and(|s| s.core_type() == yaml::ScalarType::Null)
        {
            return;
        }
        let Some(entries) = node.as_map() else {
            let d = self
                .diag(
                    &rules::SK034,
                    &node.span,
                    format!("`metadata` must be a mapping, found {}", node.describe()),
                )
                .help("write `metadata:` followed by indented `key: value` lines");
            self.push(d);
            return;
        };
        for e in entries {
            let key = e.key.as_str();
            if key == "gaia" {
                let g = gaia::analyze(self.src, &e.value, &mut self.diags);
                self.model
                    .credentials
                    .extend(g.env_vars.iter().map(|v| env_credential(v, None, false)));
                self.model.gaia = Some(g);
            } else if key == "hermes" {
                if e.value.as_map().is_some() {
                    // `skillc migrate` moves Hermes' top-level fields here; read them alike.
                    self.check_hermes_fields(&e.value);
                } else {
                    let d = self.diag(
                        &rules::SK056,
                        &e.value.span,
                        format!("`metadata.hermes` must be a mapping, found {}", e.value.describe()),
                    );
                    self.push(d);
                }
            } else if model::OPENCLAW_NAMESPACES.contains(&key) {
                self.check_openclaw(key, &e.value);
            } else if key == "version" && e.value.as_str().is_some() {
                if self.model.version.is_none() {
                    self.model.version = e.value.as_str().map(str::to_owned);
                }
                self.yaml11_warning("metadata.version", &e.value);
            } else if e.value.as_scalar().is_none() {
                let d = self
                    .diag(
                        &rules::SK035,
                        &e.value.span,
                        format!("`metadata.{key}` is {}, not a string", e.value.describe()),
                    )
                    .help("the standard defines metadata as string keys to string values; other clients may drop it");
                self.push(d);
            } else {
                self.yaml11_warning(&format!("metadata.{key}"), &e.value);
            }
        }
    }

    pub(super) fn check_openclaw(&mut self, ns: &str, node: &Node) {
        if node.as_map().is_none() {
            let d = self.diag(
                &rules::SK056,
                &node.span,
                format!("`metadata.{ns}` must be a mapping, found {}", node.describe()),
            );
            self.push(d);
            return;
        }
        if let Some(req) = node.get_value("requires") {
            if req.as_map().is_none() {
                let d = self.diag(
                    &rules::SK056,
                    &req.span,
                    format!("`metadata.{ns}.requires` must be a mapping, found {}", req.describe()),
                );
                self.push(d);
            } else {
                for (key, is_env) in [("bins", false), ("anyBins", false), ("env", true)] {
                    let Some(v) = req.get_value(key) else { continue };
                    match v.strings() {
                        Some(list) if is_env => self
                            .model
                            .credentials
                            .extend(list.iter().map(|n| env_credential(n, None, false))),
                        Some(list) => self.model.bins.extend(list),
                        None => {
                            let d = self.diag(
                                &rules::SK056,
                                &v.span,
                                format!(
                                    "`metadata.{ns}.requires.{key}` must be a list of strings, found {}",
                                    v.describe()
                                ),
                            );
                            self.push(d);
                        }
                    }
                }
            }
        }
        if let Some(p) = node.get_value("primaryEnv").and_then(Node::as_str) {
            self.model.credentials.push(env_credential(p, None, false));
        }
    }

    pub(super) fn check_hermes_fields(&mut self, root: &Node) {
        if let Some(p) = root.get_value("platforms") {
            match p.strings() {
                Some(list) => self.model.platforms = list,
                None => {
                    let d = self.diag(
                        &rules::SK056,
                        &p.span,
                        format!("`platforms` must be a list of strings, found {}", p.describe()),
                    );
                    self.push(d);
                }
            }
        }
        if let Some(p) = root.get_value("prerequisites") {
            if p.as_map().is_none() {
                let d = self.diag(
                    &rules::SK056,
                    &p.span,
                    format!(
                        "`prerequisites` must be a mapping with `commands` and `env_vars`, found {}",
                        p.describe()
                    ),
                );
                self.push(d);
            } else {
                for key in ["commands", "env_vars"] {
                    let Some(v) = p.get_value(key) else { continue };
                    match v.strings() {
                        Some(list) if key == "commands" => self.model.bins.extend(list),
                        Some(list) => self
                            .model
                            .credentials
                            .extend(list.iter().map(|n| env_credential(n, None, false))),
                        None => {
                            let d = self.diag(
                                &rules::SK056,
                                &v.span,
                                format!(
                                    "`prerequisites.{key}` must be a list of strings, found {}",
                                    v.describe()
                                ),
                            );
                            self.push(d);
                        }
                    }
                }
            }
        }
        for (key, kind, name_key) in [
            ("required_environment_variables", CredentialKind::Env, "name"),
            ("required_credential_files", CredentialKind::File, "path"),
        ] {
            let Some(v) = root.get_value(key) else { continue };
            let Some(items) = v.as_seq() else {
                let d = self.diag(
                    &rules::SK056,
                    &v.span,
                    format!("`{key}` must be a list, found {}", v.describe()),
                );
                self.push(d);
                continue;
            };
            for item in items {
                let (binding, prompt, optional) = match &item.kind {
                    NodeKind::Scalar(s) => (Some(s.value.clone()), None, false),
                    NodeKind::Map { .. } => (
                        item.get_value(name_key).and_then(Node::as_str).map(str::to_owned),
                        item.get_value("prompt")
                            .or_else(|| item.get_value("description"))
                            .and_then(Node::as_str)
                            .map(str::to_owned),
                        item.get_value("optional").and_then(Node::as_str) == Some("true"),
                    ),
                    NodeKind::Seq { .. } => (None, None, false),
                };
                match binding {
                    Some(b) if !b.trim().is_empty() => self.model.credentials.push(Credential {
                        binding: b,
                        kind,
                        prompt,
                        optional,
                    }),
                    _ => {
                        let d = self.diag(
                            &rules::SK056,
                            &item.span,
                            format!("each `{key}` entry needs a `{name_key}`"),
                        );
                        self.push(d);
                    }
                }
            }
        }
    }
}

fn env_credential(name: &str, prompt: Option<String>, optional: bool) -> Credential {
    Credential {
        binding: name.to_owned(),
        kind: CredentialKind::Env,
        prompt,
        optional,
    }
}
