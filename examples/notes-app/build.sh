#!/usr/bin/env bash
# Builds the notes app into dist/ — the template's one build command:
#
#   ./build.sh          release build (what you deploy)
#   ./build.sh --dev    debug build (faster to compile, much slower to run)
#
# Then serve dist/ with any static server on localhost (OPFS needs a secure context: https: or
# localhost; no COOP/COEP headers are needed), e.g.
#   python3 -m http.server --bind 127.0.0.1 --directory dist 8080   # open http://localhost:8080/
#
# Steps: check the tools before anything slow (wasm32 target, clang + llvm-ar for SQLite's C
# code, the wasm-bindgen CLI at exactly the version Cargo.lock has); cargo build for
# wasm32-unknown-unknown; wasm-bindgen --target web into dist/pkg/; wasm-opt if a known-good
# one is available (see below), both skipped when the module is the one the last build made
# (their output is kept in the target dir); copy www/ into dist/.
#
# Environment:
#   CARGO_TARGET_DIR   cargo's target directory (default: ./target)
#   WASM_OPT           path of the wasm-opt to use, or "off" (default: ./node_modules/.bin/wasm-opt
#                      after `npm ci` here, else wasm-opt on PATH)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

profile=release
cargo_flags=(--release)
if [[ "${1:-}" == "--dev" ]]; then
    profile=debug
    cargo_flags=()
elif [[ -n "${1:-}" ]]; then
    echo "usage: ./build.sh [--dev]" >&2
    exit 2
fi

say() { printf 'build.sh: %s\n' "$*"; }
fail() { printf 'build.sh: error: %s\n' "$*" >&2; exit 1; }

# The oldest binaryen whose wasm-opt was checked with this module (the page loads and works in
# Chromium and Firefox). binaryen 108 (Debian 12's package) breaks it: after -O the export
# __wbindgen_externrefs names the wrong table and loading fails with
# "WebAssembly.Table.set(): Argument 1 is invalid for table".
WASM_OPT_MIN=132

# --- tools (fail fast, with the fix) ----------------------------------------------------------
command -v cargo >/dev/null || fail "cargo not found: install Rust (https://rustup.rs)"
sysroot="$(rustc --print sysroot)"
[[ -d "$sysroot/lib/rustlib/wasm32-unknown-unknown" ]] \
    || fail "the wasm32 target is missing: rustup target add wasm32-unknown-unknown"
# sqlite-wasm-rs compiles SQLite's C code for wasm32 with clang and archives it with llvm-ar
# (Debian/Ubuntu: apt-get install clang llvm). CC_/AR_wasm32_unknown_unknown override them.
command -v "${CC_wasm32_unknown_unknown:-clang}" >/dev/null \
    || fail "clang not found (SQLite's C code is compiled with it): apt-get install clang llvm"
command -v "${AR_wasm32_unknown_unknown:-llvm-ar}" >/dev/null \
    || fail "llvm-ar not found (it archives SQLite's C code): apt-get install llvm"

# Cargo.lock decides the wasm-bindgen crate version (Cargo.toml pins it with "="); the CLI must
# be the very same version. `cargo metadata` writes or updates Cargo.lock without building.
cargo metadata --format-version 1 >/dev/null
lock_version="$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/^version = "|"$/, ""); print; exit }' Cargo.lock)"
[[ -n "$lock_version" ]] || fail "no wasm-bindgen in Cargo.lock"
install_cli="cargo install wasm-bindgen-cli --version $lock_version"
command -v wasm-bindgen >/dev/null || fail "the wasm-bindgen CLI is not on PATH: $install_cli"
cli_version="$(wasm-bindgen --version | awk '{ print $2 }')"
[[ "$cli_version" == "$lock_version" ]] \
    || fail "wasm-bindgen CLI $cli_version != wasm-bindgen crate $lock_version in Cargo.lock: $install_cli"

# --- build ------------------------------------------------------------------------------------
start=$SECONDS
target_dir="${CARGO_TARGET_DIR:-$here/target}"
say "cargo build ${cargo_flags[*]} --target wasm32-unknown-unknown (target dir: $target_dir)"
cargo build "${cargo_flags[@]}" --target wasm32-unknown-unknown --lib
wasm="$target_dir/wasm32-unknown-unknown/$profile/notes_app.wasm"
[[ -f "$wasm" ]] || fail "cargo did not produce $wasm"

# --- wasm-opt (optional): which one ----------------------------------------------------------
wasm_opt="${WASM_OPT:-}"
if [[ -z "$wasm_opt" ]]; then
    if [[ -x node_modules/.bin/wasm-opt ]]; then
        wasm_opt=node_modules/.bin/wasm-opt
    else
        wasm_opt="$(command -v wasm-opt || true)"
    fi
fi
run_opt=0
opt_version=""
if [[ "$profile" != release ]]; then
    opt_note="wasm-opt: skipped (debug build)"
elif [[ -z "$wasm_opt" || "$wasm_opt" == off ]]; then
    opt_note="wasm-opt: ${wasm_opt:-none found}; the module stays as LLVM left it (npm ci here installs a known-good one)"
else
    opt_version="$("$wasm_opt" --version 2>/dev/null | grep -oE '[0-9]+' | head -n 1 || true)"
    if [[ -z "$opt_version" || "$opt_version" -lt "$WASM_OPT_MIN" ]]; then
        opt_note="wasm-opt: NOT running $wasm_opt (version ${opt_version:-unknown}): versions below $WASM_OPT_MIN are not known to work with this module (binaryen 108 breaks it). npm ci here installs binaryen $WASM_OPT_MIN; WASM_OPT=off silences this."
    else
        run_opt=1
    fi
fi

# --- wasm-bindgen and wasm-opt, or their output from the last build of the same module --------
# wasm-bindgen and wasm-opt -O3 take ~45 s of a rebuild whose Rust did not change (a change in
# www/ only; or the end-to-end tests, which build three copies of this template into one target
# dir). Their output depends only on the module cargo built, the two tools and their flags, so
# it is kept in the target dir under a key of exactly those, and reused when the key matches.
# -O3: the page's level (5 % faster SQL than wasm-pack's default -O, methodology.md).
opt_flags=(-O3)
key="$(sha256sum "$wasm" | cut -c1-16)-bindgen$cli_version-web-$profile-opt$run_opt${opt_version:+v$opt_version}$(printf '%s' "${opt_flags[@]}")"
cache="$target_dir/notes-app-pkg/$key"
rm -rf dist
mkdir -p dist
out="dist/pkg/notes_app_bg.wasm"
if [[ -f "$cache/notes_app_bg.wasm" ]]; then
    cp -r "$cache" dist/pkg
    say "wasm-bindgen, wasm-opt: reused $cache (same module, same tools)"
else
    mkdir -p dist/pkg
    wasm-bindgen --target web --out-dir dist/pkg "$wasm"
    if [[ "$run_opt" == 1 ]]; then
        before=$(stat -c %s "$out")
        # wasm-opt takes the enabled features (reference types, bulk memory, ...) from the
        # module's target_features section, which rustc writes and wasm-bindgen keeps.
        "$wasm_opt" "${opt_flags[@]}" "$out" -o "$out.opt"
        mv "$out.opt" "$out"
        say "wasm-opt $opt_version: $before -> $(stat -c %s "$out") bytes"
    fi
    # One entry: the previous module's output is not needed again.
    rm -rf "$target_dir/notes-app-pkg"
    mkdir -p "$target_dir/notes-app-pkg"
    cp -r dist/pkg "$cache.partial" && mv "$cache.partial" "$cache"
fi

# Why wasm-opt did not run, on every build (a reused output included): an old one is a warning.
[[ "$run_opt" == 1 ]] || say "$opt_note"

cp www/index.html www/app.js www/worker.js www/style.css dist/
say "built dist/ in $((SECONDS - start)) s ($(stat -c %s "$out") bytes of wasm)"
say "serve it, e.g.: python3 -m http.server --bind 127.0.0.1 --directory dist 8080"
