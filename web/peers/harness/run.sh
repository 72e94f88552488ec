#!/usr/bin/env bash
# Headless check of the JavaScript peers (web/peers/index.js), standalone (without the page):
# builds the serve binary and the fixture generator, copies the module as web/build.sh does
# (web/peers/copy.sh) next to this harness, serves it with COOP/COEP, and drives the harness page
# in headless Chromium and Firefox over WebDriver (driver.mjs, plain node).
#
#   bash web/peers/harness/run.sh [--full] [--browsers chromium,firefox] [--backends a,b] [--out DIR]
#
#   --full       the real suite (bench-sql's 16 cases at full size, the 10,000-row batch)
#                instead of the small one (every count ÷ 20, 500 batch rows)
#   --browsers   default chromium,firefox
#   --backends   substrings of peer names (default: all)
#   --out DIR    result JSON files (default target/peers-harness)
#
# Needs node, chromium + chromedriver, firefox-esr + geckodriver (scripts/setup.sh installs them
# all, and the npm packages with `npm ci`). Never downloads anything.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
peers="$root/web/peers"
scale=20
browsers=chromium,firefox
backends=all
out="$root/target/peers-harness"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --full) scale=1; shift ;;
    --browsers) browsers="$2"; shift 2 ;;
    --backends) backends="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export PATH="$HOME/.cargo/bin:$PATH"
command -v node >/dev/null || { echo "run.sh: node not found (bash scripts/setup.sh)" >&2; exit 1; }

(cd "$root" && cargo build --release -q -p web --bin serve && cargo build --release -q -p peers-fixture)

work="$(mktemp -d "${TMPDIR:-/tmp}/peers-harness.XXXXXX")"
serve_pid=""
cleanup() {
  [[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

bash "$peers/copy.sh" "$work/peers" >/dev/null
mkdir -p "$work/peers/harness" "$out"
# serve wants an index.html at the root of what it serves.
echo '<!doctype html><a href="peers/harness/index.html">peers harness</a>' >"$work/index.html"
cp "$peers/harness/index.html" "$peers/harness/harness.js" "$peers/harness/worker.js" "$work/peers/harness/"
"$root/target/release/peers-fixture" --scale "$scale" --out "$work/peers/harness/fixture.json"
echo "run.sh: fixture ÷$scale: $(du -h "$work/peers/harness/fixture.json" | cut -f1)"

"$root/target/release/serve" --dir "$work" --port 0 >"$work/serve.log" 2>&1 &
serve_pid=$!
url=""
for _ in $(seq 100); do
  url="$(grep -m1 -oE 'http://127\.0\.0\.1:[0-9]+/' "$work/serve.log" || true)"
  [[ -n "$url" ]] && break
  sleep 0.1
done
[[ -n "$url" ]] || { echo "run.sh: serve did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }

status=0
IFS=, read -ra list <<<"$browsers"
for b in "${list[@]}"; do
  node "$peers/harness/driver.mjs" --browser "$b" \
    --url "${url}peers/harness/index.html?backends=$backends" \
    --out "$out/peers-$b-scale$scale.json" || status=1
  echo "run.sh: $out/peers-$b-scale$scale.json"
done
exit "$status"
