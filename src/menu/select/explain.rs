//! `--explain`: what each feature of a turn contributed to one skill's lexical score, split
//! from [`super`] so that the selection rules read apart (the same arithmetic as
//! `Menu::accumulate`, feature by feature).

use super::super::lexical::{self, Feature};
use super::{Matched, Menu, round4};

impl Menu {
    /// What each feature of the turn contributed to skill `i`'s lexical score (its share of the
    /// cosine times the skill's coordination factor and name bonus), largest first: per word
    /// the one feature that counted (`Menu::accumulate`), and every letter trigram.
    pub fn explain(&self, turn: &str, i: usize) -> Vec<Matched> {
        let features = lexical::turn_features(turn, &self.index.lexicon);
        let n = self.index.skills.len();
        let qnorm: f32 = features
            .iter()
            .filter_map(|f| {
                let (df, _) = self.index.postings(f.id)?;
                Some((f.weight * lexical::idf(n, df)).powi(2))
            })
            .sum::<f32>()
            .sqrt();
        let norm = self.index.skills.get(i).map_or(0.0, |s| s.norm);
        let all: Vec<(&Feature, f32)> = features
            .iter()
            .filter_map(|f| {
                let (df, mut p) = self.index.postings(f.id)?;
                let (_, w) = p.find(|(j, _)| *j == i)?;
                let idf = lexical::idf(n, df);
                Some((f, f.weight * idf * idf * w / (qnorm * norm).max(f32::MIN_POSITIVE)))
            })
            .collect();
        // Per word the best product (the first by id on a tie, as `add_best` keeps it).
        let mut best: std::collections::BTreeMap<u32, (&Feature, f32)> = Default::default();
        let mut found: Vec<(&Feature, f32)> = Vec::new();
        for (f, c) in all {
            if f.words == 0 {
                found.push((f, c));
            } else {
                let e = best.entry(f.words.trailing_zeros()).or_insert((f, c));
                if c > e.1 {
                    *e = (f, c);
                }
            }
        }
        let words_matched = features
            .iter()
            .filter(|f| {
                self.index
                    .postings(f.id)
                    .is_some_and(|(_, mut p)| p.any(|(j, _)| j == i))
            })
            .fold(0, |a, f| a | f.words);
        found.extend(best.into_values());
        // Each contribution carries the skill's coordination factor and name bonus, so that
        // they add up to the lexical score.
        let turn_words = features.iter().fold(0, |a, f| a | f.words);
        let named = features
            .iter()
            .filter(|f| f.words != 0)
            .filter(|f| {
                self.index
                    .postings(lexical::name_twin(f.id))
                    .is_some_and(|(_, mut p)| p.any(|(j, _)| j == i))
            })
            .fold(0, |a, f| a | f.words);
        let coord = lexical::coverage(words_matched, turn_words) * lexical::name_bonus(named, turn_words);
        let mut out: Vec<Matched> = found
            .into_iter()
            .map(|(f, c)| Matched {
                feature: f.name.clone(),
                contribution: round4(f64::from(c * coord)),
            })
            .collect();
        out.sort_by(|a, b| {
            b.contribution
                .total_cmp(&a.contribution)
                .then(a.feature.cmp(&b.feature))
        });
        out
    }
}
