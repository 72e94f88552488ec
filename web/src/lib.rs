//! # web: the benchmark page's worker entry point, and its server
//!
//! The page (`web/static/`, built into `web/dist/` by `web/build.sh`) runs every benchmark in a
//! dedicated module worker (`worker.js`), which loads this crate compiled to wasm
//! (wasm-bindgen `--target web`) and calls its exports:
//!
//! - `run(config_json, on_progress) -> Promise<string>`: runs the selected suites (bench-sql's
//!   16-case suite and 10k batch, bench-fs' filesystem lifecycle and raw OPFS per-call floor)
//!   on the selected backends and resolves to one result document ([`doc::Document`]) as JSON,
//!   with every sample. `on_progress` receives a [`doc::ProgressEvent`] as a JSON string before
//!   and after each unit of work. A failed suite does not stop the others; it is listed in
//!   `verifications.failures`.
//! - `environment(commit) -> Promise<string>`: the worker's [`doc::PageEnvironment`].
//! - `backends() -> string`: the backends each suite can run, for the page's checkboxes.
//! - `presets() -> string`: the presets ([`config::Preset`]) with their values.
//!
//! The request is [`config::Request`] (a preset and overrides); what ran is recorded as
//! [`config::RunConfig`]. Both, and the document types, are plain Rust that builds and is tested
//! natively; only the glue in `worker` is wasm32-only.
//!
//! `src/bin/serve.rs` is the native static server with the COOP/COEP headers.

pub mod config;
pub mod doc;

#[cfg(target_arch = "wasm32")]
mod worker;
