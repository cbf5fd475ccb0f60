//! One turn scored into a thread's buffers: the candidates of a turn and their fused score
//! `s` (RUNTIME.md §1), split from [`super`] so that the selection rules read apart.

use super::super::dense::{self, Vectors};
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
    pub(super) fused: Option<(&'a [f32], &'a Vectors)>,
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
        let acc = self.scratch.acc[i];
        let l = if acc == 0.0 {
            0.0
        } else {
            f64::from(
                self.menu.lexical_score(acc, self.qnorm, i)
                    * lexical::coverage(self.scratch.words[i], self.words)
                    * lexical::name_bonus(self.scratch.names[i], self.words),
            )
        };
        let s = match self.fused {
            Some((q, v)) => {
                let beta = f64::from(dense::DENSE_WEIGHT);
                (1.0 - beta) * l + beta * f64::from(v.cosine(i, q))
            }
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
