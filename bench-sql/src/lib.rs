//! Placeholder crate: see README.md in this directory for what will live here.
