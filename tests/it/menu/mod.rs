//! `skillc menu`, `skillc menu calibrate` and `skillc playbook` (issue 19; RUNTIME.md §1): the
//! selection rules over a fixture catalog, the labelled battery over the corpus, and the
//! external embedder against a local OpenAI-compatible server.

pub mod battery;
mod embedder;
mod offered;
mod select;
