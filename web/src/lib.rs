//! # web: the benchmark page's worker entry point, and its server
//!
//! The page (`web/static/`, built into `web/dist/` by `web/build.sh`) runs every benchmark in a
//! dedicated module worker (`worker.js`), which loads this crate compiled to wasm
//! (wasm-bindgen `--target web`) and calls its exports:
//!
//! - `run(config_json, on_progress, peers) -> Promise<string>`: runs the selected suites
//!   (bench-sql's 16-case suite and 10k batch, bench-fs' filesystem lifecycle and raw OPFS
//!   per-call floor, bench-sql's hand-off and scale-and-space suites) on the selected
//!   backends, round by round in shuffled orders, and resolves
//!   to one result document (`bench_results::Document`, every sample and every summary) as
//!   JSON. `on_progress` receives a `bench_results::progress::ProgressEvent` as a JSON string
//!   before and after each unit of work. `peers` is the optional module `./peers/index.js`
//!   (backends implemented in JavaScript, [`peer`]); they run in the same rounds as ours,
//!   up to `peer_runs` measured ones ([`config::RunConfig::peer_runs`]). A
//!   failing backend or suite does not stop the others; it is listed in
//!   `verifications.failures`.
//! - `environment(commit) -> Promise<string>`: the worker's `bench_results::Environment`.
//! - `backends(peers) -> Promise<string>`: the backends each suite can run (ours and the peers,
//!   with their metadata), for the page's checkboxes.
//! - `presets() -> string`: the presets ([`config::Preset`]) with their values.
//! - `load_document(text) -> string`: a result file of any version, converted and summarized
//!   (the page computes no statistics itself).
//!
//! The request is [`config::Request`] (a preset and overrides); what ran is recorded as
//! `bench_results::RunConfig`. The request logic and the peer contract are plain Rust that
//! builds and is tested natively; only the glue in `worker` is wasm32-only.
//!
//! `src/bin/serve.rs` is the native static server with the COOP/COEP headers.

pub mod config;
pub mod doc;
pub mod peer;

#[cfg(target_arch = "wasm32")]
mod worker;
