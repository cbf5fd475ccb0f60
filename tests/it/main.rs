//! The integration tests, one crate (one link instead of one per file): the real binary on
//! fixture folders and projects made at test time, whole builds through the library's
//! boundary, and the tidy checks over the source tree.
//!
//! Fixture folders are enumerated (`insta::glob!`) and their snapshot in `snapshots/` is their
//! only expectation (`cargo insta review` to update); `common` holds the shared helpers.

mod admit;
mod adversarial;
mod bad_input;
mod build;
mod cache;
mod catalog_cli;
mod check;
mod checked;
mod ci;
mod cli_contract;
mod common;
mod completions;
mod conformance;
mod corpus;
mod curate;
mod dashboard;
mod export;
mod fix;
mod fuzz;
mod import;
mod import_hostile;
mod incremental;
mod incremental_prop;
mod layers;
#[cfg(feature = "local-model")]
mod local_model;
mod menu;
mod migrate;
mod names;
mod parser_edges;
mod pinning;
mod plan;
mod publish;
mod reader_trust;
mod remote;
mod review;
mod sarif;
mod scan;
mod serve;
mod tidy;
mod trust_cli;
mod truth;
mod watch;
mod wrappers;
