//! `skillc curate` and `skillc events` end to end (issue 14; RUNTIME.md §3): the real binary
//! over projects made here, with a scripted model — a real process returning canned verdicts
//! and counting its calls — and, for the endpoint path, a real HTTP server on 127.0.0.1.

mod support;

mod behaviour;
mod budget;
mod catalog;
mod crash;
mod events;
mod http;
mod scenario;
