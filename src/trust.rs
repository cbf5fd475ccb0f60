//! Whom a catalog's consumer trusts (issue 18, item 1; README, "Security model"): the
//! signer's key is pinned, never taken from the folder being verified. In order: the key given
//! (`verify --public-key`), the keys the consumer's project configures (`[verify] keys`), or the key
//! recorded for that catalog location on first use, as ssh records a host key. A different
//! key afterwards is refused with both key ids, until the consumer accepts it
//! (`--accept-key`). `--production` accepts only a given or configured key, never a
//! first-use pin, the folder's own key or a development key. Rollback protection is kept per
//! location and per key, and carried over when a pin moves to a rotated key.
//!
//! Pure: the caller reads the key files and the state file ([`TrustState`], JSON) and writes
//! the state back after a successful verification ([`TrustState::record`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::sign::PublicKey;

/// The state file's format version. Version 1 was a bare `{"KEY ID": catalog_version}` map;
/// it is read as the per-key floors of version 2.
pub const STATE_VERSION: u32 = 2;

/// What `skillc verify` remembers between runs (`verify-state.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustState {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// Catalog location (the folder's canonical path) → the key pinned there.
    #[serde(default)]
    pub locations: BTreeMap<String, Pin>,
    /// Key id → the newest `catalog_version` accepted with that key, wherever.
    #[serde(default)]
    pub keys: BTreeMap<String, i64>,
}

/// The key pinned for one catalog location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Its key id (`3A5F09C27D1B4E68`).
    pub key_id: String,
    /// The whole public key (`skillc.pub`'s base64 line): key ids are chosen by the key's
    /// maker, so a pin compares keys, not ids.
    pub public_key: String,
    /// How it was pinned: `first-use`, `accepted` (`--accept-key`), `given` or `configured`.
    pub how: String,
    /// The newest `catalog_version` accepted at this location (any key: a rotation keeps it).
    pub catalog_version: i64,
}

/// How the key a catalog is checked against was chosen.
#[derive(Clone, Debug)]
pub enum Anchor {
    /// `--public-key FILE`.
    Given(Box<Candidate>),
    /// `[verify] keys` of the consumer's project.
    Configured(Vec<Candidate>),
    /// Nothing given or configured: the location's pin, or trust on first use.
    FirstUse,
}

/// A key the consumer named, with what is known about where it came from.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The key.
    pub key: PublicKey,
    /// Its file, as shown.
    pub shown: String,
    /// The file lies inside the folder being verified (the catalog's own `skillc.pub`).
    pub in_folder: bool,
    /// A development key: made by `skillc build` (under a `.skillc/` folder, or marked so).
    pub development: bool,
}

/// How the signer came to be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// The key given with `--public-key`.
    Given,
    /// One of the configured keys.
    Configured,
    /// The key pinned for this location earlier.
    Pinned,
    /// Nothing was pinned here: the signer is pinned now (said loudly).
    FirstUse,
    /// `--accept-key`: the pin moves to this key.
    Accepted,
}

impl How {
    /// `given`, `configured`, `pinned`, `first-use`, `accepted`.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Given => "given",
            How::Configured => "configured",
            How::Pinned => "pinned",
            How::FirstUse => "first-use",
            How::Accepted => "accepted",
        }
    }
}

/// The key to verify with, and the rollback floor that goes with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trusted {
    /// The signer's key.
    pub key: PublicKey,
    /// How it is trusted.
    pub how: How,
    /// The key a first-use pin replaces (`--accept-key`), for the message.
    pub replaces: Option<String>,
    /// The lowest `catalog_version` acceptable: the newest one accepted here or with this key.
    pub floor: Option<i64>,
}

/// Why the signer is not trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The catalog is signed by another key than the one given, configured or pinned.
    UntrustedSigner {
        /// The catalog folder, as shown.
        location: String,
        /// The signer's key id.
        signer: String,
        /// The trusted key ids.
        trusted: Vec<String>,
        /// `given`, `configured` or `first use`.
        how: &'static str,
        /// The ids are equal but the keys differ (a key made to look like the trusted one).
        same_id: bool,
    },
    /// `--production` without a given or configured key.
    ProductionNeedsKey,
    /// `--production` with the catalog folder's own key.
    InFolderKey(String),
    /// `--production` with a development key.
    DevelopmentKey(String),
    /// `--accept-key ID` where the catalog is signed by another key.
    AcceptMismatch {
        /// The id given.
        asked: String,
        /// The signer's id.
        signer: String,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::UntrustedSigner {
                location,
                signer,
                trusted,
                how,
                same_id,
            } => {
                let trusted = trusted.join(", ");
                write!(f, "untrusted signer: {location} is signed by key {signer}")?;
                if *same_id {
                    write!(f, " (a different key with the same id)")?;
                }
                write!(f, ", but key {trusted} is {how} for it")?;
                if *how == "pinned" {
                    write!(
                        f,
                        "; if the signer rotated its key, check the new key out of band, then run `skillc verify {location} --accept-key {signer}`"
                    )?;
                }
                Ok(())
            }
            Refusal::ProductionNeedsKey => f.write_str(
                "--production needs the signer's key pinned explicitly: pass --public-key FILE or configure `[verify] keys` (a key trusted on first use, or the folder's own skillc.pub, is not enough)",
            ),
            Refusal::InFolderKey(k) => write!(
                f,
                "--production refuses {k}: it is the catalog folder's own key, which proves only that the folder is self-consistent"
            ),
            Refusal::DevelopmentKey(k) => write!(
                f,
                "--production refuses {k}: it is a development key made by `skillc build`; sign releases with a key made by `skillc keygen`"
            ),
            Refusal::AcceptMismatch { asked, signer } => write!(
                f,
                "--accept-key {asked}: the catalog is signed by key {signer}, not by the key you accepted"
            ),
        }
    }
}

impl Refusal {
    /// A short kebab-case kind for JSON output.
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::UntrustedSigner { .. } => "untrusted-signer",
            Refusal::ProductionNeedsKey => "production-needs-key",
            Refusal::InFolderKey(_) => "in-folder-key",
            Refusal::DevelopmentKey(_) => "development-key",
            Refusal::AcceptMismatch { .. } => "accept-mismatch",
        }
    }
}

/// Options of [`TrustState::decide`].
#[derive(Clone, Debug, Default)]
pub struct Ask<'a> {
    /// `--accept-key ID`: move this location's pin to the signer, when its id is this.
    pub accept: Option<&'a str>,
    /// `--production`.
    pub production: bool,
}

/// Reads a key id as `--accept-key` takes it: 16 hexadecimal digits (8 bytes), as `skillc
/// verify` and minisign print them (`3A5F09C27D1B4E68`); returned in upper case.
///
/// # Errors
/// A sentence saying what a key id looks like.
pub fn parse_key_id(text: &str) -> Result<String, String> {
    let t = text.trim();
    if t.len() == 16 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(t.to_ascii_uppercase());
    }
    Err(format!(
        "a key id is 16 hexadecimal digits, as `skillc verify` prints it (e.g. `3A5F09C27D1B4E68`); `{}` is not one",
        t.escape_debug()
    ))
}

/// The base64 line of a public key file (what a pin stores).
pub fn key_line(key: &PublicKey) -> String {
    key.to_file()
        .lines()
        .find(|l| !l.starts_with("untrusted comment:"))
        .unwrap_or_default()
        .to_owned()
}

impl TrustState {
    /// Reads a state file's bytes: version 2, or version 1's `{"KEY ID": version}` map.
    ///
    /// # Errors
    /// A message when the bytes are neither (a damaged state must not silently switch
    /// rollback protection off).
    pub fn parse(bytes: &[u8]) -> Result<TrustState, String> {
        if let Ok(v1) = serde_json::from_slice::<BTreeMap<String, i64>>(bytes)
            && !v1.contains_key("version")
        {
            return Ok(TrustState {
                version: STATE_VERSION,
                locations: BTreeMap::new(),
                keys: v1,
            });
        }
        let state: TrustState = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if state.version != STATE_VERSION {
            return Err(format!(
                "unsupported version {} (this skillc writes {STATE_VERSION})",
                state.version
            ));
        }
        Ok(state)
    }

    /// The state as pretty JSON.
    pub fn render(&self) -> String {
        let mut s = self.clone();
        s.version = STATE_VERSION;
        serde_json::to_string_pretty(&s).unwrap_or_default() + "\n"
    }

    /// Decides whether the catalog at `location` (shown as `shown`), whose folder says it is
    /// signed by `signer`, is checked against `signer`, and with which rollback floor.
    ///
    /// # Errors
    /// A [`Refusal`] naming the keys involved.
    pub fn decide(
        &self,
        (location, shown): (&str, &str),
        signer: &PublicKey,
        anchor: &Anchor,
        ask: &Ask<'_>,
    ) -> Result<Trusted, Refusal> {
        let id = signer.key_id_hex();
        let refuse = |trusted: Vec<&PublicKey>, how: &'static str| Refusal::UntrustedSigner {
            location: shown.to_owned(),
            signer: id.clone(),
            same_id: trusted.iter().any(|k| k.key_id == signer.key_id),
            trusted: trusted.iter().map(|k| k.key_id_hex()).collect(),
            how,
        };
        let production_ok = |c: &Candidate| -> Result<(), Refusal> {
            if !ask.production {
                Ok(())
            } else if c.in_folder {
                Err(Refusal::InFolderKey(c.shown.clone()))
            } else if c.development {
                Err(Refusal::DevelopmentKey(c.shown.clone()))
            } else {
                Ok(())
            }
        };
        // `--accept-key` names the key the catalog must be signed by, whatever anchors it.
        if let Some(asked) = ask.accept
            && !asked.eq_ignore_ascii_case(&id)
        {
            return Err(Refusal::AcceptMismatch {
                asked: asked.to_owned(),
                signer: id,
            });
        }
        // A given or configured key that differs from the location's pin moves the pin
        // (said, like an accepted rotation).
        let moved = || {
            self.locations
                .get(location)
                .filter(|pin| pin.public_key != key_line(signer))
                .map(|pin| pin.key_id.clone())
        };
        let (how, replaces) = match anchor {
            Anchor::Given(c) => {
                production_ok(c)?;
                if c.key != *signer {
                    return Err(refuse(vec![&c.key], "given"));
                }
                (How::Given, moved())
            }
            Anchor::Configured(list) => {
                let Some(c) = list.iter().find(|c| c.key == *signer) else {
                    return Err(refuse(list.iter().map(|c| &c.key).collect(), "configured"));
                };
                production_ok(c)?;
                (How::Configured, moved())
            }
            Anchor::FirstUse if ask.production => return Err(Refusal::ProductionNeedsKey),
            Anchor::FirstUse => match self.locations.get(location) {
                None => (How::FirstUse, None),
                Some(pin) if pin.public_key == key_line(signer) => (How::Pinned, None),
                Some(pin) => match ask.accept {
                    // Checked above: the catalog is signed by the key accepted.
                    Some(_) => (How::Accepted, Some(pin.key_id.clone())),
                    None => {
                        let pinned = PublicKey::from_file(&pin.public_key).ok();
                        let mut r = refuse(pinned.iter().collect(), "pinned");
                        if let Refusal::UntrustedSigner { trusted, .. } = &mut r
                            && trusted.is_empty()
                        {
                            trusted.push(pin.key_id.clone());
                        }
                        return Err(r);
                    }
                },
            },
        };
        let here = self.locations.get(location).map(|p| p.catalog_version);
        let floor = [here, self.keys.get(&id).copied()].into_iter().flatten().max();
        Ok(Trusted {
            key: signer.clone(),
            how,
            replaces,
            floor,
        })
    }

    /// [`TrustState::decide`] for a folder whose own `skillc.pub` (`signer`) may be missing
    /// or unreadable: then only a key given with `--public-key` can be checked against (and it
    /// names what is missing); `Ok(None)` when there is none to check with. Every reader of a
    /// catalog (`verify`, `list`, `info`, `search`, `serve`, `menu`, `playbook`) decides here.
    ///
    /// # Errors
    /// A [`Refusal`] naming the keys involved.
    pub fn decide_folder(
        &self,
        at: (&str, &str),
        signer: Option<&PublicKey>,
        anchor: &Anchor,
        ask: &Ask<'_>,
    ) -> Result<Option<Trusted>, Refusal> {
        match (signer, anchor) {
            (Some(signer), _) => self.decide(at, signer, anchor, ask).map(Some),
            (None, Anchor::Given(c)) if !ask.production || !(c.in_folder || c.development) => Ok(Some(Trusted {
                key: c.key.clone(),
                how: How::Given,
                replaces: None,
                floor: self.keys.get(&c.key.key_id_hex()).copied(),
            })),
            (None, _) => Ok(None),
        }
    }

    /// Records a verified catalog: its version as the floor of its location and key, and the
    /// location's pin (first use, an accepted rotation, or the given or configured key).
    pub fn record(&mut self, location: &str, trusted: &Trusted, catalog_version: i64) {
        let id = trusted.key.key_id_hex();
        let floor = self.keys.entry(id.clone()).or_insert(catalog_version);
        *floor = (*floor).max(catalog_version);
        let before = self.locations.get(location).map(|p| p.catalog_version);
        let how = match trusted.how {
            // A pin keeps how it was made.
            How::Pinned => self
                .locations
                .get(location)
                .map(|p| p.how.clone())
                .unwrap_or_else(|| "first-use".into()),
            other => other.as_str().to_owned(),
        };
        self.locations.insert(
            location.to_owned(),
            Pin {
                key_id: id,
                public_key: key_line(&trusted.key),
                how,
                catalog_version: before.map_or(catalog_version, |b| b.max(catalog_version)),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::SecretKey;

    fn key(seed: u8, id: u8) -> PublicKey {
        SecretKey::from_seed([seed; 32], [id; 8]).public()
    }

    fn given(k: &PublicKey) -> Anchor {
        Anchor::Given(Box::new(Candidate {
            key: k.clone(),
            shown: "release.pub".into(),
            in_folder: false,
            development: false,
        }))
    }

    const AT: (&str, &str) = ("/srv/out", "out");

    #[test]
    fn first_use_pins_then_refuses_another_key_with_both_ids() {
        let (a, b) = (key(1, 1), key(2, 2));
        let mut s = TrustState::default();
        let t = s.decide(AT, &a, &Anchor::FirstUse, &Ask::default()).unwrap();
        assert_eq!((t.how, t.floor), (How::FirstUse, None));
        s.record(AT.0, &t, 10);
        let again = s.decide(AT, &a, &Anchor::FirstUse, &Ask::default()).unwrap();
        assert_eq!((again.how, again.floor), (How::Pinned, Some(10)));
        let r = s.decide(AT, &b, &Anchor::FirstUse, &Ask::default()).unwrap_err();
        let text = r.to_string();
        assert!(
            text.contains(&a.key_id_hex()) && text.contains(&b.key_id_hex()),
            "{text}"
        );
        assert!(text.contains("--accept-key"), "{text}");
        // Another location is another first use.
        assert_eq!(
            s.decide(("/srv/other", "other"), &b, &Anchor::FirstUse, &Ask::default())
                .unwrap()
                .how,
            How::FirstUse
        );
    }

    #[test]
    fn a_key_with_the_pinned_id_but_another_secret_is_refused() {
        let (a, forged) = (key(1, 7), key(9, 7));
        assert_eq!(a.key_id, forged.key_id);
        let mut s = TrustState::default();
        let t = s.decide(AT, &a, &Anchor::FirstUse, &Ask::default()).unwrap();
        s.record(AT.0, &t, 1);
        let r = s.decide(AT, &forged, &Anchor::FirstUse, &Ask::default()).unwrap_err();
        assert!(r.to_string().contains("a different key with the same id"), "{r}");
    }

    #[test]
    fn accepting_a_rotated_key_moves_the_pin_and_keeps_the_floor() {
        let (a, b) = (key(1, 1), key(2, 2));
        let mut s = TrustState::default();
        let t = s.decide(AT, &a, &Anchor::FirstUse, &Ask::default()).unwrap();
        s.record(AT.0, &t, 50);
        let wrong = Ask {
            accept: Some("0000000000000000"),
            production: false,
        };
        assert!(matches!(
            s.decide(AT, &b, &Anchor::FirstUse, &wrong),
            Err(Refusal::AcceptMismatch { .. })
        ));
        let id = b.key_id_hex();
        let ask = Ask {
            accept: Some(&id),
            production: false,
        };
        let t = s.decide(AT, &b, &Anchor::FirstUse, &ask).unwrap();
        assert_eq!(
            (t.how, t.floor, t.replaces.clone()),
            (How::Accepted, Some(50), Some(a.key_id_hex()))
        );
        s.record(AT.0, &t, 60);
        assert_eq!(
            s.decide(AT, &b, &Anchor::FirstUse, &Ask::default()).unwrap().how,
            How::Pinned
        );
        assert!(s.decide(AT, &a, &Anchor::FirstUse, &Ask::default()).is_err());
    }

    #[test]
    fn given_and_configured_keys_win_and_production_wants_one() {
        let (a, b) = (key(1, 1), key(2, 2));
        let s = TrustState::default();
        assert_eq!(s.decide(AT, &a, &given(&a), &Ask::default()).unwrap().how, How::Given);
        assert!(matches!(
            s.decide(AT, &b, &given(&a), &Ask::default()),
            Err(Refusal::UntrustedSigner { .. })
        ));
        let both = Anchor::Configured(vec![
            Candidate {
                key: a.clone(),
                shown: "2026.pub".into(),
                in_folder: false,
                development: false,
            },
            Candidate {
                key: b.clone(),
                shown: "2027.pub".into(),
                in_folder: false,
                development: false,
            },
        ]);
        assert_eq!(s.decide(AT, &b, &both, &Ask::default()).unwrap().how, How::Configured);
        let prod = Ask {
            accept: None,
            production: true,
        };
        assert_eq!(
            s.decide(AT, &a, &Anchor::FirstUse, &prod),
            Err(Refusal::ProductionNeedsKey)
        );
        let mut own = given(&a);
        if let Anchor::Given(c) = &mut own {
            c.in_folder = true;
        }
        assert!(matches!(s.decide(AT, &a, &own, &prod), Err(Refusal::InFolderKey(_))));
        let mut dev = given(&a);
        if let Anchor::Given(c) = &mut dev {
            c.development = true;
        }
        assert!(matches!(s.decide(AT, &a, &dev, &prod), Err(Refusal::DevelopmentKey(_))));
        assert_eq!(s.decide(AT, &a, &given(&a), &prod).unwrap().how, How::Given);
    }

    #[test]
    fn key_ids_are_sixteen_hex_digits() {
        assert_eq!(parse_key_id("3a5f09c27d1b4e68").as_deref(), Ok("3A5F09C27D1B4E68"));
        for bad in ["ZZZ", "", "3A5F09C27D1B4E6", "3A5F09C27D1B4E680", "3A5F09C27D1B4E6G"] {
            let e = parse_key_id(bad).unwrap_err();
            assert!(e.contains("16 hexadecimal digits"), "{e}");
        }
    }

    #[test]
    fn a_folder_without_its_key_is_checked_only_against_a_given_key() {
        let a = key(1, 1);
        let s = TrustState::default();
        assert_eq!(s.decide_folder(AT, None, &Anchor::FirstUse, &Ask::default()), Ok(None));
        let t = s.decide_folder(AT, None, &given(&a), &Ask::default()).unwrap().unwrap();
        assert_eq!((t.how, t.key), (How::Given, a.clone()));
        let t = s
            .decide_folder(AT, Some(&a), &Anchor::FirstUse, &Ask::default())
            .unwrap()
            .unwrap();
        assert_eq!(t.how, How::FirstUse);
    }

    #[test]
    fn version_1_states_are_read_as_key_floors() {
        let s = TrustState::parse(br#"{"ABCD": 7}"#).unwrap();
        assert_eq!(s.keys.get("ABCD"), Some(&7));
        let back = TrustState::parse(s.render().as_bytes()).unwrap();
        assert_eq!(
            back,
            TrustState {
                version: STATE_VERSION,
                ..s
            }
        );
        assert!(TrustState::parse(b"{broken").is_err());
        assert!(TrustState::parse(br#"{"version": 9}"#).is_err());
    }
}
