#!/usr/bin/env bash
# Checks that every pinned tool version agrees everywhere it is stated, and fails with the
# places that disagree. Run by scripts/test.sh as the gate "pins".
#
# Sources of truth, and what must match them:
#   wasm-bindgen  Cargo.lock (the crate)    == the CLI setup.sh installs (it reads Cargo.lock; the
#                                              installed `wasm-bindgen --version` is checked too)
#                                           == every `wasm-bindgen = "..."` in the Cargo.tomls
#                                              (the template pins it with "=")
#                                           == examples/notes-app/Cargo.lock
#                                           == every "wasm-bindgen[-cli] 0.2.N" in the docs
#   wasm-pack     scripts/setup.sh          == docs, web/build.sh, installed `wasm-pack --version`
#   geckodriver   scripts/setup.sh          == docs, installed `geckodriver --version`
#   binaryen      tools/binaryen/package.json (exact) == its package-lock.json
#                                           == examples/notes-app/package.json and package-lock.json
#                                           == WASM_OPT_MIN in examples/notes-app/build.sh and
#                                              web/build.sh
#                                           == every "binaryen N" in the docs, except the versions
#                                              listed in KNOWN_BAD_BINARYEN (documented as broken)
# "Docs" = every tracked *.md, *.sh, *.toml, *.rs, *.js and *.html file except lock files and
# results/. A tool that is not installed is reported, not failed (scripts/setup.sh installs it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

# binaryen versions the docs may name because they are documented as breaking our modules.
KNOWN_BAD_BINARYEN="108"

failures=0
say() { printf '[pins] %s\n' "$*"; }
bad() { printf '[pins] DRIFT: %s\n' "$*" >&2; failures=$((failures + 1)); }

# lock_version FILE CRATE : the version of CRATE in a Cargo.lock (the first entry).
lock_version() {
    awk -v n="name = \"$2\"" '$0 == n { getline; gsub(/^version = "|"$/, ""); print; exit }' "$1"
}
# shell_var FILE NAME : the value of a top-level NAME=VALUE assignment in a shell script.
shell_var() {
    sed -nE "s/^$2=\"?([^\"[:space:]]+)\"?.*/\1/p" "$1" | head -n 1
}
# json_dep FILE NAME : the version string of dependency NAME in a package.json.
json_dep() {
    node -e 'const p = require(process.argv[1]); process.stdout.write((p.dependencies || {})[process.argv[2]] || "")' \
        "$ROOT/$1" "$2"
}
# npm_lock FILE NAME : the locked version of node_modules/NAME in a package-lock.json.
npm_lock() {
    node -e 'const p = require(process.argv[1]); const e = (p.packages || {})["node_modules/" + process.argv[2]]; process.stdout.write(e ? e.version : "")' \
        "$ROOT/$1" "$2"
}
# installed BIN : the first x.y.z printed by `BIN --version`, or empty if BIN is absent.
installed() {
    command -v "$1" >/dev/null 2>&1 || return 0
    "$1" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true
}
# expect WHAT ACTUAL WANTED : one comparison.
expect() {
    if [[ -z "$2" ]]; then
        bad "$1: not found"
    elif [[ "$2" != "$3" ]]; then
        bad "$1 is $2, expected $3"
    fi
}

# Tracked text files that count as docs (plus untracked new ones, for a work tree in progress).
mapfile -t DOCS < <(
    { git ls-files; git ls-files --others --exclude-standard; } \
        | grep -E '\.(md|sh|toml|rs|js|html)$' \
        | grep -vE '(^|/)(Cargo\.lock|package-lock\.json)$|^results/' \
        | sort -u
)
# mentions REGEX : "file:line:match" for every match of the extended REGEX in the docs (-o).
mentions() {
    grep -noE "$1" "${DOCS[@]}" 2>/dev/null || true
}

# --- wasm-bindgen -------------------------------------------------------------------------------
WB="$(lock_version Cargo.lock wasm-bindgen)"
[[ -n "$WB" ]] || { bad "no wasm-bindgen in Cargo.lock"; WB="?"; }
say "wasm-bindgen: Cargo.lock has $WB"
grep -q 'lock_wasm_bindgen_version' scripts/setup.sh \
    || bad "scripts/setup.sh no longer takes the wasm-bindgen-cli version from Cargo.lock"
cli="$(installed wasm-bindgen)"
if [[ -n "$cli" ]]; then expect "installed wasm-bindgen CLI" "$cli" "$WB"; else say "wasm-bindgen CLI: not installed (setup.sh installs $WB)"; fi
expect "examples/notes-app/Cargo.toml pin" \
    "$(sed -nE 's/^wasm-bindgen = "=([0-9.]+)".*/\1/p' examples/notes-app/Cargo.toml)" "$WB"
if [[ -f examples/notes-app/Cargo.lock ]]; then
    expect "examples/notes-app/Cargo.lock" "$(lock_version examples/notes-app/Cargo.lock wasm-bindgen)" "$WB"
else
    bad "examples/notes-app/Cargo.lock is missing"
fi
while IFS= read -r hit; do
    v="$(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"${hit#*:*:}" | head -n 1)"
    [[ "$v" == "$WB" ]] || bad "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): wasm-bindgen requirement $v, Cargo.lock has $WB"
done < <(grep -noE '^wasm-bindgen = "=?[0-9][0-9.]*"' $(printf '%s\n' "${DOCS[@]}" | grep 'Cargo\.toml$'))
while IFS= read -r hit; do
    v="$(grep -oE '0\.2\.[0-9]+' <<<"${hit#*:*:}" | tail -n 1)"
    [[ "$v" == "$WB" ]] || bad "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): says wasm-bindgen $v, Cargo.lock has $WB"
done < <(mentions 'wasm-bindgen[^0-9]{0,24}0\.2\.[0-9]+')

# --- wasm-pack, geckodriver ---------------------------------------------------------------------
for tool in wasm-pack geckodriver; do
    var="$(tr 'a-z-' 'A-Z_' <<<"$tool")_VERSION"
    want="$(shell_var scripts/setup.sh "$var")"
    [[ -n "$want" ]] || { bad "scripts/setup.sh has no $var"; continue; }
    say "$tool: scripts/setup.sh pins $want"
    have="$(installed "$tool")"
    if [[ -n "$have" ]]; then expect "installed $tool" "$have" "$want"; else say "$tool: not installed"; fi
    while IFS= read -r hit; do
        v="$(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"${hit#*:*:}" | tail -n 1)"
        [[ "$v" == "$want" ]] || bad "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): says $tool $v, setup.sh pins $want"
    done < <(mentions "$tool[^0-9]{0,24}[0-9]+\.[0-9]+\.[0-9]+")
done

# --- binaryen (wasm-opt) ------------------------------------------------------------------------
if command -v node >/dev/null 2>&1; then
    BIN="$(json_dep tools/binaryen/package.json binaryen)"
    [[ "$BIN" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || bad "tools/binaryen/package.json: binaryen must be an exact version, is '$BIN'"
    say "binaryen: tools/binaryen/package.json pins $BIN"
    expect "tools/binaryen/package-lock.json" "$(npm_lock tools/binaryen/package-lock.json binaryen)" "$BIN"
    expect "examples/notes-app/package.json" "$(json_dep examples/notes-app/package.json binaryen)" "$BIN"
    expect "examples/notes-app/package-lock.json" "$(npm_lock examples/notes-app/package-lock.json binaryen)" "$BIN"
    MAJOR="${BIN%%.*}"
    for f in examples/notes-app/build.sh web/build.sh; do
        expect "$f WASM_OPT_MIN" "$(shell_var "$f" WASM_OPT_MIN)" "$MAJOR"
    done
    if [[ -x tools/binaryen/node_modules/.bin/wasm-opt ]]; then
        expect "installed tools/binaryen wasm-opt" \
            "$(tools/binaryen/node_modules/.bin/wasm-opt --version | grep -oE '[0-9]+' | head -n 1)" "$MAJOR"
    else
        say "binaryen: tools/binaryen/node_modules not installed (setup.sh runs npm ci)"
    fi
    while IFS= read -r hit; do
        v="$(grep -oE '[0-9]+' <<<"${hit#*:*:}" | head -n 1)"
        [[ "$v" == "$MAJOR" || " $KNOWN_BAD_BINARYEN " == *" $v "* ]] \
            || bad "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): says binaryen $v, the pin is $MAJOR (known bad: $KNOWN_BAD_BINARYEN)"
    done < <(mentions '(binaryen|wasm-opt)( version)? `?[0-9]{2,3}([^0-9.]|$)')
else
    bad "node not found: cannot read the binaryen pins (scripts/setup.sh installs nodejs)"
fi

if [[ $failures -gt 0 ]]; then
    say "$failures pin(s) drifted; fix the places above (the sources of truth are listed at the top of scripts/check-pins.sh)" >&2
    exit 1
fi
say "all pins agree"
