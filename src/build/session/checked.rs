//! What a build looked at and where its per-skill results came from: counts that tests
//! assert (never times) and the CLI reports (`build cache: …`).

/// What a build looked at on disk to check its inputs and outputs (tests assert these counts,
/// never times).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Input files whose metadata (size, times, inode) was compared with the store's record.
    pub inputs_statted: usize,
    /// Input files read and hashed: new, changed metadata, or no record of them.
    pub inputs_hashed: usize,
    /// Files of `out/` listed with their metadata.
    pub out_listed: usize,
    /// Files of the spare generation listed with their metadata (0 while its record is
    /// trusted).
    pub spare_listed: usize,
    /// Folders under the skill roots read from the disk by the search for skills: new or
    /// changed since the last listing, or no record of them.
    pub dirs_listed: usize,
    /// Folders under the skill roots answered from the record of their last listing (one
    /// `lstat` each: identity and times unchanged).
    pub dirs_reused: usize,
    /// Skills whose per-skill results (unit, drafts, menu entry) were taken from the
    /// persistent build cache (`.skillc/cache/`) instead of being computed.
    pub cache_hits: usize,
    /// Skills looked up in the cache and computed: no entry for their key, or a bad one.
    pub cache_misses: usize,
    /// Entries found and refused (truncated, corrupt, another version): counted in
    /// `cache_misses` too, each with a warning in [`Outcome::warnings`](super::Outcome::warnings).
    pub cache_refused: usize,
    /// Entries written by this session (one per skill computed).
    pub cache_written: usize,
    /// Skills whose entry was taken from the remote cache (`[cache] remote`; not counted in
    /// `cache_hits` nor `cache_misses`).
    pub remote_hits: usize,
    /// Remote entries found and refused (corrupt, another version): each a warning, and a
    /// miss.
    pub remote_refused: usize,
    /// Entries and L5 answers written to the remote cache by this session.
    pub remote_pushed: usize,
    /// L5 answers (one per wrapper) taken from the remote cache.
    pub l5_remote: usize,
    /// Wrappers this session sent to `python3` for L5.
    pub l5_described: usize,
    /// The catalog-wide admission levels (L3 affinity, L4 routing) were not judged: their
    /// verdicts were those the last build of this output folder recorded for exactly the
    /// same question (the same plans, settings, vocabulary and tool).
    pub admission_reused: bool,
}
