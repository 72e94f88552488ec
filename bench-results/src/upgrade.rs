//! Conversions of older document versions to the current layout, applied to the JSON before it
//! is read ([`crate::Document::from_json`]).
//!
//! ## Version 1 → 2
//!
//! Version 1 (the page before the schema crate, e.g. `results/2026-11-30-*.json`) embedded the
//! suites' own results:
//!
//! - `fs` was bench-fs' `FsResult` `{schema_version, config, environment, lifecycle, raw?}`:
//!   version 2's `fs` is the lifecycle itself, so `fs.lifecycle` moves up to `fs` (and an
//!   `fs.raw` to `raw` when there is no top-level `raw`).
//! - `sql` was bench-sql's `BenchResult` `{schema_version, suite, config, environment,
//!   backends}`: its `schema_version` and `environment` are dropped (the document has one
//!   environment; `environment.runtime` and `.arch` are taken from it where missing). Its
//!   backends had `name`, `durability`, `persistent` and runs of `{suite, batch}` without a
//!   round: they load as they are (engine SQLite, the non-persistent one the reference, runs
//!   paired by position, which is how version 1 ran them: round by round in one fixed order).
//! - the page's `environment` called the OS `platform` and the CPU count
//!   `hardware_concurrency`: read through serde aliases ([`crate::Environment`]).
//! - `runner.console_errors` held JSON values: each becomes its text.
//! - summaries (`summary` fields) were of the old shape; they are recomputed on load, with the
//!   ratios, intervals and goals version 1 did not have.
//!
//! Backend names stay as recorded (version 1 has `ours-*-buffered`, the level that
//! `balanced` later replaced; they are not renamed, and no goal is checked on them).

use serde_json::{Map, Value};

/// Converts a version 1 document in place (see the module docs).
pub fn v1_to_v2(doc: &mut Value) {
    let Some(top) = doc.as_object_mut() else {
        return;
    };
    // fs: bench-fs' FsResult -> its lifecycle.
    if let Some(fs) = top.remove("fs") {
        let mut fs = match fs {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if let Some(raw) = fs.remove("raw").filter(|r| !r.is_null()) {
            top.entry("raw").or_insert(raw);
        }
        match fs.remove("lifecycle") {
            Some(l) if !l.is_null() => {
                top.insert("fs".to_owned(), l);
            }
            // A bare lifecycle (has backends): keep it.
            _ if fs.contains_key("backends") => {
                top.insert("fs".to_owned(), Value::Object(fs));
            }
            _ => {}
        }
    }
    // sql: drop bench-sql's own version and environment.
    let mut sql_env = None;
    if let Some(Value::Object(sql)) = top.get_mut("sql") {
        sql.remove("schema_version");
        sql_env = sql.remove("environment");
    }
    if let (Some(Value::Object(env)), Some(Value::Object(old))) =
        (top.get_mut("environment"), sql_env)
    {
        if !env.contains_key("runtime") {
            if let Some(p) = old.get("platform") {
                env.insert("runtime".to_owned(), p.clone());
            }
        }
        if !env.contains_key("arch") {
            if let Some(a) = old.get("arch") {
                env.insert("arch".to_owned(), a.clone());
            }
        }
    }
    // runner.console_errors: values -> strings.
    if let Some(Value::Array(errors)) = top
        .get_mut("runner")
        .and_then(|r| r.get_mut("console_errors"))
    {
        for e in errors.iter_mut() {
            if !e.is_string() {
                *e = Value::String(e.to_string());
            }
        }
    }
    top.insert("schema_version".to_owned(), Value::from(2));
}
