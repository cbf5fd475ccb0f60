//! Which skills an open [`super::MenuCatalog`] has checked and found verified: one flag per
//! skill of its index, so that a long-lived reader checks a skill's files once.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// One flag per skill of the index: its files were checked by this open catalog and verified
/// ([`super::MenuCatalog::select`], [`super::MenuCatalog::playbook`]). Only a pass is remembered: a skill
/// that failed, or could not be read, is checked again the next time it would be offered.
pub(super) struct Checked(Box<[AtomicBool]>);

impl Checked {
    pub(super) fn new(skills: usize) -> Checked {
        Checked((0..skills).map(|_| AtomicBool::new(false)).collect())
    }

    pub(super) fn get(&self, i: usize) -> bool {
        self.0.get(i).is_some_and(|c| c.load(Ordering::Acquire))
    }

    pub(super) fn set(&self, i: usize) {
        if let Some(c) = self.0.get(i) {
            c.store(true, Ordering::Release);
        }
    }

    pub(super) fn forget(&self) {
        for c in &self.0 {
            c.store(false, Ordering::Release);
        }
    }
}

impl fmt::Debug for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.iter().filter(|c| c.load(Ordering::Relaxed)).count();
        write!(f, "Checked({n} of {} skills)", self.0.len())
    }
}
