#!/usr/bin/env bash
# Runs the `mount` fuzz target from the committed seeds (fuzz/README.md), with the flags every
# run uses; further arguments go to libFuzzer. scripts/test.sh's gate "fuzz (short)" runs
#   FUZZ_CORPUS=<scratch dir> bash fuzz/run.sh -max_total_time=60
#
# Environment:
#   FUZZ_CORPUS   where new inputs go (default fuzz/corpus/mount, git-ignored); the committed
#                 seeds (fuzz/seeds/corpus) are read, never written
#   FUZZ_ARTIFACTS  where a crashing input is written (default fuzz/artifacts/mount/)
#
# Flags: no sanitizer (the engine has no unsafe code outside the SQLite FFI, which this target
# does not use; ASan would halve the speed), debug assertions and overflow checks on (a hostile
# number that overflows is a finding), libFuzzer's RSS limit 2 GiB and single-malloc limit
# 512 MiB (the target's own bound is tighter: 64 MiB + 16 x image per execution, counted by
# its allocator), inputs up to 256 KiB (the largest seed is ~130 KiB).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
cd "$ROOT/fuzz"

corpus="${FUZZ_CORPUS:-$ROOT/fuzz/corpus/mount}"
artifacts="${FUZZ_ARTIFACTS:-$ROOT/fuzz/artifacts/mount/}"
mkdir -p "$corpus" "$artifacts"

exec cargo +nightly fuzz run --sanitizer none --debug-assertions mount "$corpus" seeds/corpus -- \
    -artifact_prefix="${artifacts%/}/" -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -max_len=262144 -timeout=30 -print_final_stats=1 "$@"
