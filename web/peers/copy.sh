#!/usr/bin/env bash
# Copies the peers module (web/peers/index.js) and exactly the npm package files it loads into
# DEST, keeping their relative paths (index.js imports ./node_modules/<package>/...):
#
#   bash web/peers/copy.sh DEST        (web/build.sh: DEST = web/dist/peers)
#
# The packages come from web/peers/node_modules, installed by `npm ci` (scripts/setup.sh) at the
# versions pinned in web/peers/package-lock.json; this checks each installed version against the
# lock and never runs npm itself.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:?usage: copy.sh DEST}"
nm="$here/node_modules"

# package -> version pinned in package-lock.json (each also appears in PACKAGES in index.js)
declare -A pinned=(
  ["@sqlite.org/sqlite-wasm"]="3.54.1-build1"
  ["@journeyapps/wa-sqlite"]="2.0.6"
  ["@electric-sql/pglite"]="0.5.17"
)
for pkg in "${!pinned[@]}"; do
  manifest="$nm/$pkg/package.json"
  if [[ ! -f "$manifest" ]]; then
    echo "copy.sh: $pkg is not installed in $nm: run 'bash scripts/setup.sh' (or 'npm ci' in web/peers)" >&2
    exit 1
  fi
  got="$(grep -m1 -oE '"version": *"[^"]+"' "$manifest" | sed -E 's/.*"([^"]+)"$/\1/')"
  if [[ "$got" != "${pinned[$pkg]}" ]]; then
    echo "copy.sh: $pkg $got is installed, ${pinned[$pkg]} is pinned: run 'npm ci' in web/peers" >&2
    exit 1
  fi
  if ! grep -q "\"node_modules/$pkg\": {" "$here/package-lock.json" \
    || ! grep -A1 "\"node_modules/$pkg\": {" "$here/package-lock.json" | grep -q "\"version\": \"${pinned[$pkg]}\""; then
    echo "copy.sh: package-lock.json does not pin $pkg at ${pinned[$pkg]}" >&2
    exit 1
  fi
done

files=(
  index.js
  node_modules/@sqlite.org/sqlite-wasm/package.json
  node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs
  node_modules/@sqlite.org/sqlite-wasm/dist/sqlite3.wasm
  node_modules/@sqlite.org/sqlite-wasm/dist/sqlite3-opfs-async-proxy.js
  node_modules/@journeyapps/wa-sqlite/package.json
  node_modules/@journeyapps/wa-sqlite/LICENSE
  node_modules/@journeyapps/wa-sqlite/dist/wa-sqlite.mjs
  node_modules/@journeyapps/wa-sqlite/dist/wa-sqlite.wasm
  node_modules/@journeyapps/wa-sqlite/dist/wa-sqlite-async.mjs
  node_modules/@journeyapps/wa-sqlite/dist/wa-sqlite-async.wasm
  node_modules/@journeyapps/wa-sqlite/src/sqlite-api.js
  node_modules/@journeyapps/wa-sqlite/src/sqlite-constants.js
  node_modules/@journeyapps/wa-sqlite/src/FacadeVFS.js
  node_modules/@journeyapps/wa-sqlite/src/VFS.js
  node_modules/@journeyapps/wa-sqlite/src/WebLocksMixin.js
  node_modules/@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js
  node_modules/@journeyapps/wa-sqlite/src/examples/AccessHandlePoolVFS.js
  node_modules/@journeyapps/wa-sqlite/src/examples/IDBBatchAtomicVFS.js
  node_modules/@electric-sql/pglite/package.json
  node_modules/@electric-sql/pglite/LICENSE
  node_modules/@electric-sql/pglite/dist/pglite.wasm
  node_modules/@electric-sql/pglite/dist/initdb.wasm
  node_modules/@electric-sql/pglite/dist/pglite.data
)
# PGlite's ES modules: the entry point, its chunks, the Emscripten glue and the file systems it
# imports on demand (fs/opfs-ahp.js, ...). Source maps, CommonJS and extension tarballs are left out.
pglite="node_modules/@electric-sql/pglite/dist"
for f in "$here/$pglite"/*.js "$here/$pglite"/fs/*.js; do
  files+=("${f#"$here/"}")
done

for f in "${files[@]}"; do
  [[ -f "$here/$f" ]] || { echo "copy.sh: $f missing (incomplete npm install?)" >&2; exit 1; }
  mkdir -p "$dest/$(dirname "$f")"
  cp "$here/$f" "$dest/$f"
done
echo "copy.sh: copied ${#files[@]} files to $dest ($(du -sh "$dest" | cut -f1))"
