//! L3 affinity: the Jaccard overlap of a plan's affinity terms with every other executor's
//! stays below the threshold (`AD004`). The confusion is a property of the pair, so *both*
//! plans are rejected, each naming the executor it is most confused with (ties: the smallest
//! name); the verdict does not depend on the order skills are found in.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use super::Judging;
use crate::model::{AdmissionSettings, Level};
use crate::rules;

/// Rejects every plan still in whose affinity overlaps another's at or above the threshold.
pub(super) fn judge(run: &mut Judging<'_, '_>, settings: &AdmissionSettings) {
    let keys = run.alive();
    let terms: Vec<&[String]> = keys
        .iter()
        .map(|&k| {
            run.candidate(k)
                .and_then(|c| c.executor)
                .map_or(&[][..], |e| e.affinity.as_slice())
        })
        .collect();
    let names: Vec<(String, &str)> = keys
        .iter()
        .map(|&k| {
            run.candidate(k)
                .map_or((String::new(), ""), |c| (c.name.full(), c.name.provider.as_str()))
        })
        .collect();
    let mut rejected = Vec::new();
    for (idx, (other, overlap)) in check_l3(&terms, &names, settings) {
        let threshold = if names[idx].1 == names[other].1 {
            settings.affinity_threshold_same_provider
        } else {
            settings.affinity_threshold
        };
        rejected.push((
            keys[idx],
            format!(
                "its affinity terms overlap {:.2} with those of `{}` (threshold {threshold}): a request could mean either",
                overlap, names[other].0
            ),
        ));
    }
    for (k, reason) in rejected {
        run.reject(k, Level::L3, &rules::AD004, reason);
    }
}

/// L3 over executors `terms[i]` (sorted affinity terms) named `names[i]` = (full name,
/// provider): for every executor whose overlap with another reaches the threshold, the other
/// executor it overlaps most with (ties: the smallest name) and the overlap.
///
/// A set-similarity self-join (PPJoin, Xiao et al., "Efficient similarity joins for near
/// duplicate detection", WWW 2008): terms are interned and ranked by rarity, executors are
/// taken by size (then index), and each is compared only with the smaller ones it can reach.
/// Two sets `x`, `y` with `|y| ≤ |x|` and Jaccard ≥ t share `O ≥ t/(1+t)·(|x|+|y|)` terms,
/// so their rarest shared term lies among the first `|x| - ⌈t·|x|⌉ + 1` of `x` (the probe
/// prefix) and the first `|y| - ⌈2t/(1+t)·|y|⌉ + 1` of `y` (the index prefix, shorter: only
/// those are indexed); and where it lies bounds `O` (the positional filter), so most pairs
/// are dismissed without comparing their terms. `t` is the lower of the two thresholds. The
/// result is exactly that of comparing every pair (unit tests check it against the quadratic
/// scan). Memory stays linear: each executor keeps only its best match.
pub fn check_l3(
    terms: &[&[String]],
    names: &[(String, &str)],
    settings: &AdmissionSettings,
) -> BTreeMap<usize, (usize, f64)> {
    let t_min = settings
        .affinity_threshold
        .min(settings.affinity_threshold_same_provider)
        .clamp(0.0, 1.0);
    let (sets, vocab_size) = rarity_sets(terms);
    let probe = |n: usize| prefix_len(n, t_min);
    let indexed = |n: usize| prefix_len(n, 2.0 * t_min / (1.0 + t_min));
    // The join's order: by size, then by index (a total order, the same on every run).
    let mut order: Vec<usize> = (0..sets.len()).collect();
    order.sort_by_key(|&i| (sets[i].len(), i));
    let mut rank = vec![0usize; sets.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    // Term → (executor, the term's position in it), for the terms of each index prefix.
    let mut index: Vec<Vec<(u32, u32)>> = vec![Vec::new(); vocab_size];
    for (i, set) in sets.iter().enumerate() {
        for (pos, &t) in set[..indexed(set.len())].iter().enumerate() {
            index[t as usize].push((
                u32::try_from(i).unwrap_or(u32::MAX),
                u32::try_from(pos).unwrap_or(u32::MAX),
            ));
        }
    }
    let n = sets.len();
    let mut provider_ids: HashMap<&str, u32> = HashMap::new();
    let provider: Vec<u32> = names
        .iter()
        .map(|(_, p)| {
            let next = u32::try_from(provider_ids.len()).unwrap_or(u32::MAX);
            *provider_ids.entry(p).or_insert(next)
        })
        .collect();
    type Best = Vec<Option<(usize, f64)>>;
    // Is `(j, o)` a better partner than `current`? Higher overlap, then the smaller name: a
    // total order, so merging the threads' results in any order gives the same answer.
    let better = |current: Option<(usize, f64)>, j: usize, o: f64| match current {
        None => true,
        Some((bj, bo)) => o > bo || (o == bo && names[j].0 < names[bj].0),
    };
    // Each pair is compared once (from the later of the two in the join's order) and noted for
    // both; every thread keeps its own best partners, merged at the end.
    let best: Best = (0..n)
        .into_par_iter()
        .fold(
            || (vec![None; n], vec![u32::MAX; n]),
            |(mut best, mut seen): (Best, Vec<u32>), i| {
                let a = &sets[i];
                let stamp = u32::try_from(i).unwrap_or(u32::MAX);
                for (pa, &t) in a[..probe(a.len())].iter().enumerate() {
                    for &(j, pb) in &index[t as usize] {
                        let j = j as usize;
                        if rank[j] >= rank[i] || seen[j] == stamp {
                            continue;
                        }
                        // The first term met is the rarest the two share, so the terms after it
                        // bound the overlap; a pair dismissed here cannot pass at a later term.
                        seen[j] = stamp;
                        let b = &sets[j];
                        let threshold = if provider[i] == provider[j] {
                            settings.affinity_threshold_same_provider
                        } else {
                            settings.affinity_threshold
                        };
                        if !may_reach((a.len(), pa), (b.len(), pb as usize), threshold) {
                            continue;
                        }
                        let o = overlap(a, b);
                        if o < threshold {
                            continue;
                        }
                        if better(best[i], j, o) {
                            best[i] = Some((j, o));
                        }
                        if better(best[j], i, o) {
                            best[j] = Some((i, o));
                        }
                    }
                }
                (best, seen)
            },
        )
        .map(|(best, _)| best)
        .reduce(
            || vec![None; n],
            |mut x, y| {
                for (k, b) in y.into_iter().enumerate() {
                    if let Some((j, o)) = b
                        && better(x[k], j, o)
                    {
                        x[k] = Some((j, o));
                    }
                }
                x
            },
        );
    best.into_iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (i, b)))
        .collect()
}

/// Whether two sets of `(size, position of the rarest term they share)` can still reach
/// Jaccard `threshold`: the length filter (`|a ∩ b| ≤ min`, so J ≤ min / max) and the
/// positional filter (the shared terms are that one and at most the fewer of the terms after
/// it on either side, against the `t/(1+t)·(|a|+|b|)` that J ≥ t needs).
fn may_reach((a, pa): (usize, usize), (b, pb): (usize, usize), threshold: f64) -> bool {
    if (a.min(b) as f64) < threshold * a.max(b) as f64 {
        return false;
    }
    let reachable = 1 + (a - pa - 1).min(b - pb - 1);
    reachable as f64 >= threshold / (1.0 + threshold) * (a + b) as f64 - ROUNDING
}

/// Room left on every bound the join prunes with, so that rounding never dismisses a pair
/// exactly at the threshold.
const ROUNDING: f64 = 1e-9;

/// The length of the prefix of an `n`-term set that must hold the rarest term it shares with
/// any set it overlaps by `share` or more of its own size: `n - ⌈share·n⌉ + 1`, at least one
/// term (rounded so as to keep a term rather than lose one).
fn prefix_len(n: usize, share: f64) -> usize {
    if n == 0 {
        return 0;
    }
    let need = (share * n as f64 - ROUNDING).ceil().max(1.0) as usize;
    (n + 1).saturating_sub(need).min(n)
}

/// Each executor's terms as sorted, de-duplicated ids ranked by rarity (then by the term), so
/// that sorting ids sorts by rarity; and the number of distinct terms.
fn rarity_sets(terms: &[&[String]]) -> (Vec<Vec<u32>>, usize) {
    let mut df: HashMap<&str, u32> = HashMap::new();
    for ts in terms {
        for t in ts.iter() {
            *df.entry(t.as_str()).or_default() += 1;
        }
    }
    let mut vocab_terms: Vec<(&str, u32)> = df.iter().map(|(t, n)| (*t, *n)).collect();
    vocab_terms.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    let id: HashMap<&str, u32> = vocab_terms
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (*t, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let sets = terms
        .iter()
        .map(|ts| {
            let mut v: Vec<u32> = ts.iter().filter_map(|t| id.get(t.as_str()).copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    (sets, vocab_terms.len())
}

/// Jaccard similarity `|a ∩ b| / |a ∪ b|` of two sorted, de-duplicated id lists; 0 when both
/// are empty.
fn overlap(a: &[u32], b: &[u32]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - both;
    if union == 0 { 0.0 } else { both as f64 / union as f64 }
}
