//! Test machinery, behind the `testing` feature: a power-loss and fault-injection simulator over
//! in-memory physical files ([`CrashStorage`]), and the deterministic PRNG the simulator and the
//! benchmark generators share ([`SplitMix64`]). Not part of the library's API for applications.

mod crash;

pub use crash::{
    CallCounts, CrashFile, CrashMode, CrashStorage, Fate, Fault, FaultEffect, FaultOp, PendingInfo,
    PendingOp, SplitMix64, SECTOR,
};
