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
            self.cands.clear();
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
        }
        self.cands.clear();
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

    #[test]
    fn scratch_is_clear_after_each_turn() {
        with_scratch(10, |s| {
            s.acc[3] = 1.0;
            s.mark(3);
            s.mark(3);
            assert_eq!(s.cands, [3]);
            s.words[3] = 5;
        });
        with_scratch(10, |s| {
            assert!(s.acc.iter().all(|&a| a == 0.0) && s.seen.iter().all(|&m| !m) && s.cands.is_empty());
            assert!(s.words.iter().all(|&w| w == 0));
        });
    }
}
