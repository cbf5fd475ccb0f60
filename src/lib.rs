//! skillc: a catalog compiler for Agent Skills.
//!
//! The library holds every stage of the pipeline (see ARCHITECTURE.md); `src/main.rs` only
//! parses arguments and maps the result of [`cli::run`] to an exit code.

pub mod admit;
pub mod build;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod db;
pub mod diag;
pub mod emit;
pub mod export;
pub mod extract;
pub mod generate;
pub mod import;
pub mod menu;
pub mod migrate;
pub mod route;
pub mod rules;
pub mod scan;
pub mod sign;
pub mod skill;
pub mod translate;
pub mod verify;
pub mod vocab;
pub mod watch;
