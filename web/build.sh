#!/usr/bin/env bash
# Builds the benchmark page into web/dist/:
#   web/dist/index.html, app.js, worker.js, style.css   (copied from web/static/)
#   web/dist/pkg/web.js, web_bg.wasm, ...                (wasm-pack --target web output)
#
# Usage: bash web/build.sh [--dev]
#   --dev   debug build (fast to compile, slow to run: not for measurements)
#
# Never downloads anything: wasm-pack runs with --mode no-install and uses the wasm-bindgen CLI
# on PATH (its version must equal the wasm-bindgen crate's in Cargo.lock). wasm-opt is off (see
# [package.metadata.wasm-pack] in web/Cargo.toml: binaryen 108 breaks the module).
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
rm -rf "$dist"
mkdir -p "$dist"
# wasm-pack resolves --out-dir relative to the crate directory.
(cd "$root" && wasm-pack build web --target web "$profile" --mode no-install --no-pack \
  --out-dir dist/pkg --out-name web)
cp "$web"/static/index.html "$web"/static/app.js "$web"/static/worker.js "$web"/static/style.css "$dist"/
# Backends implemented in JavaScript (optional: worker.js runs them if peers/index.js exists).
if [[ -d "$web/static/peers" ]]; then
  cp -r "$web/static/peers" "$dist/peers"
fi
# wasm-pack writes a .gitignore ("*") into pkg/; the whole dist/ is ignored at the root already.
rm -f "$dist/pkg/.gitignore"
echo "build.sh: built $dist in $(( $(date +%s) - start )) s ($(du -h "$dist/pkg/web_bg.wasm" | cut -f1) wasm)"
