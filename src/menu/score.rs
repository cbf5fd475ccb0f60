//! Scoring one turn against a loaded index at the cost of the turn's postings, not of the
//! catalog (issue 19, acceptance 4: ≤ 1 ms a turn on 10,000 skills).
//!
//! - The lexical cosine is summed from the postings of the turn's features into per-thread
//!   buffers ([`Scratch`]) that are reused from turn to turn: a turn allocates no buffer of the
//!   catalog's size, and only the skills it touched are reset afterwards.
//! - The menu needs the best few candidates, not all of them in order: [`TopK`] keeps the best
//!   `k` (at most 6) while candidates stream past, one comparison for most of them.
//!
//! The arithmetic is exactly that of [`super::Menu::candidates`] (same summation order, same
//! `f32` → `f64` steps, same rounding), so a menu is byte-identical to one ordered by sorting
//! every candidate; a test checks the two against each other.

use std::cell::RefCell;
use std::cmp::Ordering;

/// The buffers of one thread's turns.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Per skill: the summed `q × idf × w` of the turn's features (0 when not touched).
    pub acc: Vec<f32>,
    /// Per skill: whether it is a candidate of this turn.
    pub seen: Vec<bool>,
    /// Per skill: the turn's words it matched (`lexical::Feature::words`, OR-ed).
    pub words: Vec<u64>,
    /// Per skill: the turn's words its name twins matched (`lexical::name_bonus`).
    pub names: Vec<u64>,
    /// Per skill: the best product of the current word's features (0 when not touched).
    pub best: Vec<f32>,
    /// The skills the current word touched, in the order first met.
    pub word_cands: Vec<u32>,
    /// The candidates of this turn, in the order they were first met.
    pub cands: Vec<u32>,
}

impl Scratch {
    /// Sized for `n` skills, all clear.
    fn ready(&mut self, n: usize) {
        if self.acc.len() != n {
            self.acc = vec![0.0; n];
            self.seen = vec![false; n];
            self.words = vec![0; n];
            self.names = vec![0; n];
            self.best = vec![0.0; n];
            self.cands.clear();
            self.word_cands.clear();
        }
    }

    /// Marks `i` a candidate (once).
    pub fn mark(&mut self, i: usize) {
        if !self.seen[i] {
            self.seen[i] = true;
            self.cands.push(i as u32);
        }
    }

    /// Clears what this turn touched.
    fn clear(&mut self) {
        for &i in &self.cands {
            self.acc[i as usize] = 0.0;
            self.seen[i as usize] = false;
            self.words[i as usize] = 0;
            self.names[i as usize] = 0;
        }
        self.cands.clear();
        // Folded after each word; cleared here too in case a turn stopped half-way.
        for &i in &self.word_cands {
            self.best[i as usize] = 0.0;
        }
        self.word_cands.clear();
    }
}

/// Adds `qi × w` to the sum of every skill of a postings list and the feature's turn words
/// (`words`) to the skill's, marking the skills it touches first (in list order: the
/// summation order is fixed).
pub fn add_products(postings: impl Iterator<Item = (usize, f32)>, qi: f32, words: u64, s: &mut Scratch) {
    for (i, w) in postings {
        if s.acc[i] == 0.0 {
            s.mark(i);
        }
        s.acc[i] += qi * w;
        s.words[i] |= words;
    }
}

/// Keeps, per skill of a postings list, the larger of its best product so far for the current
/// word and `qi × w`, and adds the feature's turn words (`words`) to the skill's, marking the
/// skills it touches first.
pub fn add_best(postings: impl Iterator<Item = (usize, f32)>, qi: f32, words: u64, s: &mut Scratch) {
    for (i, w) in postings {
        s.mark(i);
        if s.best[i] == 0.0 {
            s.word_cands.push(i as u32);
        }
        s.best[i] = s.best[i].max(qi * w);
        s.words[i] |= words;
    }
}

/// Adds each touched skill's best product of the current word to its sum (in the order the
/// skills were first met: the summation order is fixed) and clears the word's buffers.
pub fn fold_best(s: &mut Scratch) {
    for &i in &s.word_cands {
        s.acc[i as usize] += s.best[i as usize];
        s.best[i as usize] = 0.0;
    }
    s.word_cands.clear();
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's buffers sized for `n` skills and clear; clears them after.
/// A nested call (which the menu never makes) gets fresh buffers instead of a panic.
pub fn with_scratch<T>(n: usize, f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            s.ready(n);
            let out = f(&mut s);
            s.clear();
            out
        }
        Err(_) => {
            let mut s = Scratch::default();
            s.ready(n);
            f(&mut s)
        }
    })
}

/// The best `k` items seen, best first, under a total order `cmp` (`Less` = better).
#[derive(Debug)]
pub struct TopK<T> {
    k: usize,
    items: Vec<T>,
    /// How many were offered in all.
    pub seen: usize,
}

impl<T> TopK<T> {
    /// Keeps at most `k`.
    pub fn new(k: usize) -> TopK<T> {
        TopK {
            k,
            items: Vec::with_capacity(k + 1),
            seen: 0,
        }
    }

    /// Offers an item.
    pub fn push(&mut self, item: T, cmp: impl Fn(&T, &T) -> Ordering) {
        self.seen += 1;
        if self.k == 0 {
            return;
        }
        if self.items.len() == self.k && self.items.last().is_some_and(|w| cmp(&item, w) != Ordering::Less) {
            return;
        }
        let at = self.items.partition_point(|x| cmp(x, &item) == Ordering::Less);
        self.items.insert(at, item);
        self.items.truncate(self.k);
    }

    /// The kept items, best first.
    pub fn into_sorted(self) -> Vec<T> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_equals_a_full_sort() {
        let mut x: u64 = 7;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 50
        };
        for k in 0..8 {
            let v: Vec<(u64, usize)> = (0..300).map(|i| (next(), i)).collect();
            let cmp = |a: &(u64, usize), b: &(u64, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
            let mut t = TopK::new(k);
            for &e in &v {
                t.push(e, cmp);
            }
            assert_eq!(t.seen, 300);
            let mut sorted = v.clone();
            sorted.sort_by(cmp);
            sorted.truncate(k);
            assert_eq!(t.into_sorted(), sorted, "k = {k}");
        }
    }

    const WORDS: &[&str] = &[
        "deploy",
        "report",
        "mail",
        "invoice",
        "pdf",
        "merge",
        "garden",
        "water",
        "sprint",
        "ticket",
        "docker",
        "image",
        "photo",
        "weather",
        "calendar",
        "meeting",
        "release",
        "notes",
        "changelog",
        "table",
    ];

    /// A random catalog of 5 to 64 skills over [`WORDS`] (triggers, disabled skills, an agent
    /// `a`), and its size.
    fn random_menu(round: usize, next: &mut impl FnMut(u64) -> u64) -> (crate::menu::Menu, usize) {
        use crate::menu::index::{self, Entry, Header};
        use crate::menu::lexical::{self, Lexicon};
        use crate::menu::settings::{Agent, MenuSettings, Threshold};
        let lexicon = Lexicon::default();
        let n = 5 + next(60) as usize;
        let entries: Vec<Entry> = (0..n)
            .map(|i| {
                let text: Vec<&str> = (0..1 + next(6))
                    .map(|_| WORDS[next(WORDS.len() as u64) as usize])
                    .collect();
                let text = text.join(" ");
                let fields = [lexical::Field {
                    text: &text,
                    weight: 1.0 + next(3) as f32,
                    head: next(2) == 0,
                    name: next(2) == 0,
                }];
                Entry {
                    slug: format!("s{i:03}"),
                    title: text.clone(),
                    line: text.clone(),
                    triggers: if next(4) == 0 {
                        vec![WORDS[next(WORDS.len() as u64) as usize].to_owned()]
                    } else {
                        vec![]
                    },
                    enabled: next(8) != 0,
                    skill_md_sha256: [0; 32],
                    body_offset: 0,
                    features: lexical::doc_features(&fields, &lexicon),
                    dense_keys: Vec::new(),
                }
            })
            .collect();
        let agent: Vec<String> = (0..n).filter(|_| next(3) == 0).map(|i| format!("s{i:03}")).collect();
        let settings = MenuSettings {
            gate_triggerless: round.is_multiple_of(3),
            threshold: Some(Threshold {
                embedder: lexical::EMBEDDER.into(),
                recipe: crate::menu::doc::RECIPE.into(),
                tau: [0.0, 0.1, 0.2, 0.35][round % 4],
            }),
            agents: [(
                "a".to_owned(),
                Agent {
                    skills: agent,
                    menu_size: 2,
                },
            )]
            .into(),
            ..MenuSettings::default()
        };
        let header = Header {
            settings,
            ..Header::default()
        };
        let refs: Vec<&Entry> = entries.iter().collect();
        let menu =
            crate::menu::Menu::load(index::render(&refs, &lexicon, header, &Default::default()), None).expect("index");
        (menu, n)
    }

    /// The menu picked by the top-k path is the menu of the rules applied by sorting every
    /// candidate (`Menu::candidates` + `Menu::order` + the fill), over random catalogs, turns,
    /// sizes, agents, gates and a down embedder.
    #[test]
    fn the_fast_menu_is_the_menu_of_the_full_sort() {
        use crate::menu::lexical;
        use crate::menu::{DenseTurn, Pass, Query};
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..12 {
            let (menu, n) = random_menu(round, &mut next);
            for _ in 0..40 {
                let turn: Vec<&str> = (0..next(5)).map(|_| WORDS[next(WORDS.len() as u64) as usize]).collect();
                let turn = turn.join(" ") + " zz";
                let agent = (next(4) == 0).then_some("a");
                let size = 1 + next(6) as usize;
                let dense = if next(5) == 0 {
                    DenseTurn::Unavailable("down".into())
                } else {
                    DenseTurn::None
                };
                let q = Query {
                    turn: &turn,
                    agent,
                    size: Some(size),
                    dense: dense.clone(),
                };
                let fast: Vec<(usize, Pass, f64)> = menu
                    .select(&q)
                    .expect("menu")
                    .items
                    .iter()
                    .map(|i| (i.index, i.pass, i.score))
                    .collect();
                let down = matches!(dense, DenseTurn::Unavailable(_));
                let gate = menu.index().header.settings.gate_triggerless;
                let tau = (!down).then(|| menu.threshold_for(lexical::EMBEDDER)).flatten();
                let cands = menu.candidates(&turn, agent, &dense).expect("candidates");
                let mut full: Vec<(usize, Pass, f64)> = menu
                    .order(&cands, tau, gate, !(gate && down), !down)
                    .into_iter()
                    .map(|(i, p, s, _)| (i, p, s))
                    .collect();
                if full.len() < size && !gate {
                    let members = &menu.index().header.settings.agents["a"].skills;
                    full.extend(
                        (0..n)
                            .filter(|i| cands.iter().all(|c| c.index != *i))
                            .filter(|&i| {
                                let s = &menu.index().skills[i];
                                s.enabled && s.triggers.is_empty() && agent.is_none_or(|_| members.contains(&s.slug))
                            })
                            .map(|i| (i, Pass::Always, 0.0)),
                    );
                }
                full.truncate(size);
                assert_eq!(fast, full, "round {round}, turn {turn:?}, agent {agent:?}, size {size}");
            }
        }
    }

    /// A menu of skills `s000`, `s001`, … from `(name text, body text)`, no vocabulary.
    fn menu_of(docs: &[(&str, &str)]) -> crate::menu::Menu {
        use crate::menu::index::{self, Entry, Header};
        use crate::menu::lexical::{self, Lexicon};
        let lexicon = Lexicon::default();
        let entries: Vec<Entry> = docs
            .iter()
            .enumerate()
            .map(|(i, (name, body))| {
                let fields = [
                    lexical::Field {
                        text: name,
                        weight: 1.0,
                        head: false,
                        name: true,
                    },
                    lexical::Field {
                        text: body,
                        weight: 1.0,
                        head: false,
                        name: false,
                    },
                ];
                Entry {
                    slug: format!("s{i:03}"),
                    title: (*name).to_owned(),
                    line: (*body).to_owned(),
                    triggers: vec![],
                    enabled: true,
                    skill_md_sha256: [0; 32],
                    body_offset: 0,
                    features: lexical::doc_features(&fields, &lexicon),
                    dense_keys: Vec::new(),
                }
            })
            .collect();
        let refs: Vec<&Entry> = entries.iter().collect();
        crate::menu::Menu::load(
            index::render(&refs, &lexicon, Header::default(), &Default::default()),
            None,
        )
        .expect("index")
    }

    fn scores(menu: &crate::menu::Menu, turn: &str) -> Vec<f64> {
        let cands = menu
            .candidates(turn, None, &crate::menu::DenseTurn::None)
            .expect("candidates");
        (0..menu.index().skills.len())
            .map(|i| cands.iter().find(|c| c.index == i).map_or(0.0, |c| c.score))
            .collect()
    }

    /// `deployment` is `w:deploy` and `p:deplo`: a skill with the word scores by the better
    /// of the two, and `--explain` lists that one, its contributions adding up to the score.
    #[test]
    fn a_word_is_counted_once() {
        let menu = menu_of(&[("guide", "deployment"), ("guide", "deploy")]);
        let s = scores(&menu, "deployment");
        assert!(s[0] > 0.0 && s[1] > 0.0, "{s:?}");
        let e = menu.explain("deployment", 0);
        let names: Vec<&str> = e.iter().map(|m| m.feature.as_str()).collect();
        assert_eq!(
            names.iter().filter(|n| ["w:deploy", "p:deplo"].contains(n)).count(),
            1,
            "{names:?}"
        );
        let sum: f64 = e.iter().map(|m| m.contribution).sum();
        assert!((sum - s[0]).abs() < 0.0005, "{sum} vs {}", s[0]);
    }

    /// The same words, one skill with the turn's word in its name: that skill scores about
    /// double (the name bonus, every word of the turn in the name; the name twins move the
    /// norm by a fraction of a percent).
    #[test]
    fn the_name_bonus_prefers_the_named_skill() {
        let menu = menu_of(&[("invoice", "report"), ("report", "invoice")]);
        let s = scores(&menu, "invoice");
        let ratio = s[0] / s[1];
        assert!(
            (ratio - (1.0 + f64::from(crate::menu::lexical::NAME_BONUS))).abs() < 0.02,
            "{s:?}"
        );
    }

    /// A word no skill has leaves the turn's norm alone: only the coordination factor (half
    /// of the turn's words matched) lowers the score.
    #[test]
    fn an_unknown_word_does_not_enter_the_norm() {
        let menu = menu_of(&[("report", "invoice"), ("notes", "weather")]);
        let one = scores(&menu, "invoice")[0];
        let two = scores(&menu, "invoice qqqq")[0];
        assert!(one > 0.0 && (two - one / 2.0).abs() < 0.0002, "{one} {two}");
    }

    #[test]
    fn scratch_is_clear_after_each_turn() {
        with_scratch(10, |s| {
            s.acc[3] = 1.0;
            s.mark(3);
            s.mark(3);
            assert_eq!(s.cands, [3]);
            s.words[3] = 5;
            s.names[3] = 1;
            s.best[4] = 2.0;
            s.word_cands.push(4);
        });
        with_scratch(10, |s| {
            assert!(s.acc.iter().all(|&a| a == 0.0) && s.seen.iter().all(|&m| !m) && s.cands.is_empty());
            assert!(s.words.iter().all(|&w| w == 0) && s.names.iter().all(|&w| w == 0));
            assert!(s.best.iter().all(|&b| b == 0.0) && s.word_cands.is_empty());
        });
    }
}
