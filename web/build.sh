#!/usr/bin/env bash
# Builds the benchmark page into web/dist/:
#   web/dist/index.html, app.js, worker.js, style.css   (copied from web/static/)
#   web/dist/pkg/web.js, web_bg.wasm, ...                (wasm-pack --target web output)
#   web/dist/peers/index.js, node_modules/...            (the JavaScript peers: web/peers/copy.sh)
#
# Usage: bash web/build.sh [--dev]
#   --dev   debug build (fast to compile, slow to run: not for measurements)
#
# Never downloads anything: wasm-pack runs with --mode no-install and uses the wasm-bindgen CLI
# on PATH (its version must equal the wasm-bindgen crate's in Cargo.lock). wasm-pack's own
# wasm-opt is off ([package.metadata.wasm-pack] in web/Cargo.toml: it would pick up Debian's
# binaryen 108, which breaks the module); release builds then run the pinned binaryen from npm
# (tools/binaryen, `npm ci` by scripts/setup.sh) at -O3 (5 % faster SQL than wasm-pack's default -O in Chromium, methodology.md).
# WASM_OPT=/path/to/wasm-opt picks another one (version >= WASM_OPT_MIN), WASM_OPT=off none.
# Serve the result with: cargo run --release -p web --bin serve -- --dir web/dist
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
web="$root/web"
dist="$web/dist"
profile=--release
[[ "${1:-}" == "--dev" ]] && profile=--dev

need() { command -v "$1" >/dev/null || { echo "build.sh: $1 not found on PATH ($2)" >&2; exit 1; }; }
need wasm-pack "cargo install --locked wasm-pack --version 0.15.1, or bash scripts/setup.sh"
need wasm-bindgen "cargo install wasm-bindgen-cli --version <the version in Cargo.lock>"

lock_version="$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' "$root/Cargo.lock")"
cli_version="$(wasm-bindgen --version | awk '{print $2}')"
if [[ -n "$lock_version" && "$lock_version" != "$cli_version" ]]; then
  echo "build.sh: wasm-bindgen CLI $cli_version does not match the crate $lock_version in Cargo.lock" >&2
  exit 1
fi

start=$(date +%s)
# No DWARF in the page's module (the workspace's release profile keeps line tables for native
# `perf`); the name section that browsers' profilers show is kept either way.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-0}"
rm -rf "$dist"
mkdir -p "$dist"
# wasm-pack resolves --out-dir relative to the crate directory.
(cd "$root" && wasm-pack build web --target web "$profile" --mode no-install --no-pack \
  --out-dir dist/pkg --out-name web)
# wasm-opt: checked with binaryen 132 (the pin in tools/binaryen/package.json) in Chromium and
# Firefox; binaryen 108 breaks the module ("WebAssembly.Table.set(): Argument 1 is invalid for
# table"), so older versions are refused.
WASM_OPT_MIN=132
wasm_opt="${WASM_OPT:-$root/tools/binaryen/node_modules/.bin/wasm-opt}"
if [[ "$profile" == --release && "$wasm_opt" != off ]]; then
  [[ -x "$wasm_opt" ]] || command -v "$wasm_opt" >/dev/null \
    || { echo "build.sh: $wasm_opt not found (bash scripts/setup.sh runs npm ci in tools/binaryen; WASM_OPT=off skips wasm-opt)" >&2; exit 1; }
  opt_version="$("$wasm_opt" --version | grep -oE '[0-9]+' | head -n 1)"
  if [[ "$opt_version" -lt "$WASM_OPT_MIN" ]]; then
    echo "build.sh: $wasm_opt is binaryen $opt_version; $WASM_OPT_MIN or newer is needed (108 breaks the module)" >&2
    exit 1
  fi
  wasm="$dist/pkg/web_bg.wasm"
  before=$(stat -c %s "$wasm")
  # Features (reference types, bulk memory, ...) come from the module's target_features section.
  "$wasm_opt" -O3 "$wasm" -o "$wasm.opt"
  mv "$wasm.opt" "$wasm"
  echo "build.sh: wasm-opt $opt_version -O3: $before -> $(stat -c %s "$wasm") bytes"
fi
cp "$web"/static/index.html "$web"/static/app.js "$web"/static/worker.js "$web"/static/style.css "$dist"/
# The JavaScript peers and the npm package files they load (installed by setup.sh's `npm ci`).
bash "$web/peers/copy.sh" "$dist/peers"
# wasm-pack writes a .gitignore ("*") into pkg/; the whole dist/ is ignored at the root already.
rm -f "$dist/pkg/.gitignore"
echo "build.sh: built $dist in $(( $(date +%s) - start )) s ($(du -h "$dist/pkg/web_bg.wasm" | cut -f1) wasm)"
