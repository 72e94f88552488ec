#!/bin/bash
# Instructions executed inside the 16 cases, natively (callgrind), by the memory VFS and by our
# volume at Balanced in both buffer modes: per case, in all, and how many of ours were a
# checkpoint run inside a case (the browser runs checkpoints when the worker idles, outside the
# cases). See README.md.
#   bash results/2026-12-07-native-instructions/run.sh [OUT_DIR]
# Needs valgrind (callgrind_annotate). ~6 min on 2 cores. A backend whose profile exists in
# OUT_DIR already is not run again, only summarized.
#   CACHE_SIM=1 bash results/2026-12-07-native-instructions/run.sh [OUT_DIR]
# also simulates the caches (callgrind --cache-sim=yes, the host's L1 and last-level sizes;
# ~3x slower) and prints a second table: each case's L1 and last-level misses, and the
# estimated cycles (Ir + 10 x L1 misses + 100 x last-level misses, KCachegrind's estimate).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# SQLite built as sqlite-wasm-rs builds it for the browser: 8 KiB pages, a 16 MiB cache, temp
# files in memory (the repository's .cargo/config.toml sets only the first flag).
export LIBSQLITE3_FLAGS="SQLITE_ENABLE_BATCH_ATOMIC_WRITE SQLITE_DEFAULT_PAGE_SIZE=8192 SQLITE_DEFAULT_CACHE_SIZE=-16384 SQLITE_TEMP_STORE=2"
CARGO_TARGET_DIR=target/wasmlike cargo build --release -p bench-sql --bin bench-sql-native
bin=target/wasmlike/release/bench-sql-native
out=${1:-$(mktemp -d)}
backends=(memvfs ours-disk-balanced ours-memory-balanced)
sim=()
[ "${CACHE_SIM:-0}" = 1 ] && sim=(--cache-sim=yes)
for b in "${backends[@]}"; do
    [ -f "$out/$b.out" ] && continue
    mkdir -p "$out/dir-$b"
    # Only execute_script counts (the connection's PRAGMAs, then each case), and a dump after
    # each call: dump 1 holds the PRAGMAs, dump k + 1 case k.
    valgrind --tool=callgrind "${sim[@]}" --toggle-collect='bench_sql::execute_script' \
        --dump-after='bench_sql::execute_script' --callgrind-out-file="$out/$b.out" \
        "$bin" --suites sql --runs 1 --warmup 0 --backends "$b" --reference sqlite-memvfs \
        --dir "$out/dir-$b" --out "$out/$b.json" 2> "$out/$b.log" &
done
wait
events() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
# Inclusive cost of the checkpoints in one dump (none for the memory VFS).
checkpoints() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2> /dev/null \
        | awk '/checkpoint_quietly \[/ && !seen { gsub(",", "", $1); print $1; seen = 1 }
               END { if (!seen) print 0 }'
}
echo "instructions per case; for ours: the checkpoint's share, and the rest above the memory VFS"
printf '%-6s %14s' case memvfs
for b in "${backends[@]:1}"; do printf ' %14s %12s %12s' "$b" checkpoint "rest-memvfs"; done
echo
declare -A sum
for case in $(seq 1 16); do
    ref=$(events "$out/memvfs.out.$((case + 1))")
    sum[memvfs]=$((${sum[memvfs]:-0} + ref))
    printf '%-6s %14s' "$case" "$ref"
    for b in "${backends[@]:1}"; do
        f="$out/$b.out.$((case + 1))"
        n=$(events "$f")
        c=$(checkpoints "$f")
        sum[$b]=$((${sum[$b]:-0} + n))
        sum[$b-c]=$((${sum[$b-c]:-0} + c))
        printf ' %14s %12s %12s' "$n" "$c" "$((n - c - ref))"
    done
    echo
done
printf '%-6s %14s' total "${sum[memvfs]}"
for b in "${backends[@]:1}"; do
    printf ' %14s %12s %12s' "${sum[$b]}" "${sum[$b-c]}" "$((${sum[$b]} - ${sum[$b-c]} - ${sum[memvfs]}))"
done
echo

[ "${CACHE_SIM:-0}" = 1 ] || exit 0
# One dump's counts by event name (the `events:` line names the `summary:` line's columns;
# callgrind leaves out trailing zero counts).
count() { # FILE EVENT...: the sum of those events
    awk -v want="${*:2}" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
        /^(summary|totals):/ { n = split(want, w, " "); s = 0
            for (i = 1; i <= n; i++) s += $(col[w[i]] + 1); printf "%.0f\n", s; exit }' "$1"
}
echo
echo "simulated caches per case: L1 misses, last-level misses, estimated cycles (case 12 with its checkpoint)"
printf '%-6s %12s %10s %14s' case memvfs-L1m LLm est-cycles
for b in "${backends[@]:1}"; do printf ' %12s %10s %14s %8s' "L1m" LLm est-cycles "+%"; done
echo
declare -A tot
for case in $(seq 1 16); do
    printf '%-6s' "$case"
    ref=0
    for b in "${backends[@]}"; do
        f="$out/$b.out.$((case + 1))"
        l1=$(count "$f" I1mr D1mr D1mw)
        ll=$(count "$f" ILmr DLmr DLmw)
        ir=$(count "$f" Ir)
        est=$((ir + 10 * l1 + 100 * ll))
        tot[$b-l1]=$((${tot[$b-l1]:-0} + l1))
        tot[$b-ll]=$((${tot[$b-ll]:-0} + ll))
        tot[$b-est]=$((${tot[$b-est]:-0} + est))
        printf ' %12s %10s %14s' "$l1" "$ll" "$est"
        if [ "$b" = memvfs ]; then ref=$est; else
            awk -v a="$est" -v r="$ref" 'BEGIN { printf " %+7.2f%%", 100 * (a - r) / r }'; fi
    done
    echo
done
printf '%-6s' total
for b in "${backends[@]}"; do
    printf ' %12s %10s %14s' "${tot[$b-l1]}" "${tot[$b-ll]}" "${tot[$b-est]}"
    [ "$b" = memvfs ] || awk -v a="${tot[$b-est]}" -v r="${tot[memvfs-est]}" \
        'BEGIN { printf " %+7.2f%%", 100 * (a - r) / r }'
done
echo
