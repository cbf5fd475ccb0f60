//! One turn scored into a thread's buffers: the candidates of a turn and their fused score
//! `s` (RUNTIME.md §1), split from [`super`] so that the selection rules read apart.

use super::super::dense;
use super::super::lexical;
use super::super::score::Scratch;
use super::{Candidate, Menu, round4};

/// One turn scored into this thread's buffers (`Menu::with_turn`).
pub(super) struct Turn<'a> {
    pub(super) menu: &'a Menu,
    pub(super) scratch: &'a Scratch,
    pub(super) qnorm: f32,
    /// The turn's words (`lexical::Feature::words` of all its features).
    pub(super) words: u64,
    /// With a dense embedder: every skill's dense score ([`dense::Vectors::cosine`] with the turn's
    /// vector; 0 for a skill that may not be offered).
    pub(super) dense: Option<&'a [f32]>,
    /// With `dense`: the agreement floors of the turn ([`agreement_floors`]), the lexical and
    /// the dense score a skill reaches to be in both top lists.
    pub(super) agree: Option<(f64, f64)>,
    pub(super) hits: &'a std::collections::BTreeMap<usize, Vec<String>>,
    pub(super) allowed: Option<&'a [usize]>,
}

impl Turn<'_> {
    /// Whether skill `i` is a candidate of the turn.
    pub(super) fn is_candidate(&self, i: usize) -> bool {
        self.scratch.seen[i]
    }

    /// The candidates, in no particular order.
    pub(super) fn candidates(&self) -> impl Iterator<Item = usize> + '_ {
        self.scratch
            .cands
            .iter()
            .map(|&c| c as usize)
            .filter(|&i| self.scratch.seen[i])
    }

    /// The score `s` of candidate `i`: its lexical cosine times its coordination factor
    /// (`lexical::coverage`) and its name bonus (`lexical::name_bonus`), fused with the dense one when the turn has a vector; four
    /// decimals, never below 0.
    pub(super) fn score(&self, i: usize) -> f64 {
        let l = lexical_of(self.menu, self.scratch, self.qnorm, self.words, i);
        let s = match self.dense {
            Some(d) => dense::fuse(l, f64::from(d[i]), self.agree),
            None => l,
        };
        round4(s.max(0.0))
    }

    pub(super) fn candidate(&self, i: usize) -> Candidate {
        Candidate {
            index: i,
            hits: self.hits.get(&i).cloned().unwrap_or_default(),
            triggered: !self.menu.index.skills[i].triggers.is_empty(),
            score: self.score(i),
        }
    }
}

/// The lexical score of skill `i`: its cosine times its coordination factor
/// (`lexical::coverage`) and its name bonus (`lexical::name_bonus`); 0 when the turn touched
/// nothing of it.
fn lexical_of(menu: &Menu, scratch: &Scratch, qnorm: f32, words: u64, i: usize) -> f64 {
    let acc = scratch.acc[i];
    if acc == 0.0 {
        return 0.0;
    }
    f64::from(
        menu.lexical_score(acc, qnorm, i)
            * lexical::coverage(scratch.words[i], words)
            * lexical::name_bonus(scratch.names[i], words),
    )
}

/// The agreement floors of a turn (recipe [`dense::FUSION`]): the [`dense::AGREEMENT_TOP`]-th
/// largest lexical score (at least a hair above 0: a skill the turn does not touch never
/// agrees) and dense score over `skills` (those that may be offered), or `None` for none.
pub(super) fn agreement_floors(
    menu: &Menu,
    scratch: &Scratch,
    qnorm: f32,
    words: u64,
    dense: &[f32],
    skills: impl Iterator<Item = usize>,
) -> Option<(f64, f64)> {
    let k = dense::AGREEMENT_TOP;
    // Two small sorted lists (largest first) of the best `k` of each half.
    let (mut lex, mut den): (Vec<f64>, Vec<f64>) = (Vec::with_capacity(k + 1), Vec::with_capacity(k + 1));
    let keep = |top: &mut Vec<f64>, x: f64| {
        if top.len() < k || top.last().is_some_and(|m| x > *m) {
            let at = top.partition_point(|y| *y >= x);
            top.insert(at, x);
            top.truncate(k);
        }
    };
    let mut any = false;
    for i in skills {
        any = true;
        keep(&mut lex, lexical_of(menu, scratch, qnorm, words, i));
        keep(&mut den, f64::from(dense[i]));
    }
    any.then(|| {
        let floor = |top: &Vec<f64>| top.last().copied().unwrap_or(0.0);
        (floor(&lex).max(1e-9), floor(&den))
    })
}
