//! What a run checked ([`Verifications`]).
//!
//! Every suite verifies its own work and fails if a check fails: the SQL suite checks after
//! reopen that the dropped tables are gone and `PRAGMA integrity_check` is ok, the batch that
//! all rows are present, the lifecycle every byte it reads and exactly the surviving files
//! after reopen. A check that passed is listed in `passed`; an error of any kind (a backend
//! that failed, a peer that threw) is a failure.

use serde::{Deserialize, Serialize};

/// The verification outcome of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verifications {
    /// No failure, and at least one check passed.
    pub all_passed: bool,
    /// What was verified and passed, one line each.
    #[serde(default)]
    pub passed: Vec<String>,
    /// What failed.
    #[serde(default)]
    pub failures: Vec<Failure>,
}

/// One failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// `sql`, `batch`, `fs`, `raw`.
    pub suite: String,
    /// The backend, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The error.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Some(b) => write!(f, "{}/{b}: {}", self.suite, self.message),
            None => write!(f, "{}: {}", self.suite, self.message),
        }
    }
}

impl Verifications {
    /// Records a passed check.
    pub fn pass(&mut self, what: impl Into<String>) {
        self.passed.push(what.into());
        self.update();
    }

    /// Records a failure.
    pub fn fail(&mut self, suite: &str, backend: Option<&str>, message: impl Into<String>) {
        self.failures.push(Failure {
            suite: suite.to_owned(),
            backend: backend.map(str::to_owned),
            message: message.into(),
        });
        self.update();
    }

    fn update(&mut self) {
        self.all_passed = self.failures.is_empty() && !self.passed.is_empty();
    }
}
