#!/usr/bin/env bash
# The main job: set-up, then the benchmark.
#
# For now this runs the native demo (vfs/examples/demo.rs). Later issues turn this script into
# the full browser benchmark (SQL and filesystem workloads over OPFS in headless Chromium and
# Firefox, results written under results/); keep this file as the single entry point.
#
# Environment:
#   SETUP_SKIP_BROWSERS=1  passed to scripts/setup.sh (skip browsers and drivers)
# Arguments are passed to the demo: bash scripts/bench.sh -- ARGS  or  bash scripts/bench.sh ARGS
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

now_us() { local t="${EPOCHREALTIME/[.,]/}"; echo "$((10#$t))"; }
fmt_secs() {
    local ds=$(( ($1 + 50000) / 100000 ))
    printf '%d.%d s' $((ds / 10)) $((ds % 10))
}
say() { printf '[bench] %s\n' "$*"; }

start="$(now_us)"
if ! bash "$ROOT/scripts/setup.sh"; then
    say "FAILED: set-up (scripts/setup.sh)" >&2
    exit 1
fi
say "set-up done ($(fmt_secs $(( $(now_us) - start ))))"

if [[ "${1:-}" == "--" ]]; then
    shift
fi

if [[ ! -f vfs/examples/demo.rs ]]; then
    say "FAILED: vfs/examples/demo.rs does not exist yet" >&2
    exit 1
fi

start="$(now_us)"
say "\$ cargo run --release -p opfs-vfs --example demo -- $*"
rc=0
cargo run --release -p opfs-vfs --example demo -- "$@" || rc=$?
if [[ $rc -ne 0 ]]; then
    say "FAILED: demo exited with code $rc ($(fmt_secs $(( $(now_us) - start ))))" >&2
    exit "$rc"
fi
say "demo done ($(fmt_secs $(( $(now_us) - start ))))"
