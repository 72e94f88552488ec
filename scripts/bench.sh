#!/usr/bin/env bash
# The main job: set-up, then the full browser benchmark.
#
#   1. scripts/setup.sh                      (idempotent: browsers, drivers, wasm tools)
#   2. bash web/build.sh                     (the page: wasm in release, into web/dist/)
#   3. cargo build --release -p web -p bench-runner --bin serve --bin bench-runner
#   4. target/release/bench-runner ...       serves web/dist, runs the page headless in Chromium
#                                            and Firefox (WebDriver), prints progress, writes
#                                            results/<date>-<browser>.json and
#                                            results/<date>-report.md
#
# Usage:
#   bash scripts/bench.sh [bench-runner options]
#       default: --preset full --browsers chromium,firefox (all suites, all backends)
#       e.g.     bash scripts/bench.sh --preset quick --browsers chromium
#                bash scripts/bench.sh --suites sql,batch --backends ours-memory-strict,sahpool,sqlite-memvfs --runs 3
#       every option: cargo run -p bench-runner -- --help
#   bash scripts/bench.sh --native [-- ARGS]
#       the native side instead: the volume lifecycle demo (vfs/examples/demo.rs), then the SQL
#       suite over the native backends (bench-sql-native, ARGS passed to it), then the
#       filesystem suite natively (bench-fs-native) where it exists.
#
# Environment:
#   SETUP_SKIP_BROWSERS=1  passed to scripts/setup.sh (then only --native can work)
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

# step NAME CMD... : run one step, print its wall time, stop at the first failure.
step() {
    local name="$1"
    shift
    say "=== $name"
    say "\$ $*"
    local start rc=0
    start="$(now_us)"
    "$@" || rc=$?
    if [[ $rc -ne 0 ]]; then
        say "FAILED: $name (exit code $rc, $(fmt_secs $(( $(now_us) - start ))))" >&2
        exit "$rc"
    fi
    say "done: $name ($(fmt_secs $(( $(now_us) - start ))))"
}

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
fi

TOTAL_START="$(now_us)"
step "set-up (scripts/setup.sh)" bash "$ROOT/scripts/setup.sh"

if [[ "${1:-}" == "--native" ]]; then
    shift
    [[ "${1:-}" == "--" ]] && shift
    step "native demo" cargo run --release -p opfs-vfs --example demo
    step "native SQL suite" cargo run --release -p bench-sql --bin bench-sql-native -- "$@"
    if [[ -f bench-fs/src/bin/bench-fs-native.rs ]]; then
        step "native filesystem suite" cargo run --release -p bench-fs --bin bench-fs-native
    fi
    say "all done in $(fmt_secs $(( $(now_us) - TOTAL_START )))"
    exit 0
fi

[[ "${1:-}" == "--" ]] && shift
# The full preset unless the caller chose one.
args=("$@")
if [[ " ${args[*]:-} " != *" --preset "* ]]; then
    args=(--preset full "${args[@]}")
fi

step "build the page (web/build.sh)" bash web/build.sh
step "build serve and bench-runner (release)" \
    cargo build --release -p web -p bench-runner --bin serve --bin bench-runner
target="${CARGO_TARGET_DIR:-$ROOT/target}"
step "benchmark (bench-runner ${args[*]})" \
    "$target/release/bench-runner" --serve-bin "$target/release/serve" --dir web/dist \
    --out-dir results --screenshot "$target/bench-runner/{date}-{browser}.png" "${args[@]}"
say "all done in $(fmt_secs $(( $(now_us) - TOTAL_START )))"
