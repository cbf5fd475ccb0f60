//! The catalog in use (IO layer): reading a built `out/` for what runs after the build, and
//! nothing from a catalog that does not verify (RUNTIME.md: "nothing is offered, served or
//! loaded from an `out/` that `skillc verify` would refuse").
//!
//! - [`menu`]: the menu and playbooks of a catalog — `skillc menu`, `skillc playbook` and
//!   programs embedding skillc open one with [`menu::MenuCatalog::open`], which verifies the
//!   chain of trust of what the menu reads, then ask it per turn with no file read.

pub mod menu;
