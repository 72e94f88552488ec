#!/usr/bin/env bash
# Idempotent installer for everything this workspace needs on Debian 12 (run as root).
#
# Every step checks first and is skipped when already satisfied, so a second run takes seconds.
# Each step prints its wall time. Output of the slow install commands goes to a log file
# (printed in full with SETUP_VERBOSE=1, and its tail is shown when a step fails).
#
# Environment:
#   SETUP_SKIP_BROWSERS=1  skip the browsers and their WebDriver drivers (chromium,
#                          chromium-driver, firefox-esr, geckodriver) for quick native-only use
#   SETUP_VERBOSE=1        stream install output instead of writing it to the log files
#   SETUP_LOG_DIR=DIR      where install logs go (default: ${TMPDIR:-/tmp}/opfs-vfs-setup)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export PATH="$HOME/.cargo/bin:$PATH"
export DEBIAN_FRONTEND=noninteractive

WASM_PACK_VERSION=0.15.1
GECKODRIVER_VERSION=0.37.1
CARGO_FUZZ_VERSION=0.13.1
SETUP_SKIP_BROWSERS="${SETUP_SKIP_BROWSERS:-0}"
SETUP_VERBOSE="${SETUP_VERBOSE:-0}"
LOG_DIR="${SETUP_LOG_DIR:-${TMPDIR:-/tmp}/opfs-vfs-setup}"
mkdir -p "$LOG_DIR"

# --- helpers -----------------------------------------------------------------------------------

now_us() { local t="${EPOCHREALTIME/[.,]/}"; echo "$((10#$t))"; }

fmt_secs() { # microseconds -> "12.3 s"
    local ds=$(( ($1 + 50000) / 100000 ))
    printf '%d.%d s' $((ds / 10)) $((ds % 10))
}

say() { printf '[setup] %s\n' "$*"; }

STEP_NAME=""
STEP_START=0
step_begin() { STEP_NAME="$1"; STEP_START="$(now_us)"; }
step_end() { # $1 = outcome text ("ok", "already present", "skipped (...)")
    say "$STEP_NAME ... $1 ($(fmt_secs $(( $(now_us) - STEP_START ))))"
}
step_fail() {
    say "$STEP_NAME ... FAILED ($(fmt_secs $(( $(now_us) - STEP_START ))))${1:+: $1}" >&2
    exit 1
}

# run_logged LOGNAME CMD... : run a command, output to $LOG_DIR/LOGNAME.log (or the terminal).
run_logged() {
    local log="$LOG_DIR/$1.log"
    shift
    if [[ "$SETUP_VERBOSE" == 1 ]]; then
        "$@"
        return
    fi
    say "$STEP_NAME ... running: $* (log: $log)"
    if "$@" >"$log" 2>&1; then
        return 0
    else
        local rc=$?
        if [[ "${QUIET_FAILURE:-0}" == 1 ]]; then
            say "$STEP_NAME ... failed (exit code $rc; see $log)"
            return "$rc"
        fi
        echo "----- last 40 lines of $log -----" >&2
        tail -n 40 "$log" >&2 || true
        echo "---------------------------------" >&2
        return "$rc"
    fi
}

# tool_version CMD : first version-looking token printed by `CMD --version`, or empty.
tool_version() {
    command -v "$1" >/dev/null 2>&1 || return 0
    "$1" --version 2>/dev/null | head -n 1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true
}

# cargo_install_tool STEP_NAME BINARY VERSION CRATE release|debug [fallback-unlocked]
#
# `debug` builds the tool without optimization (`cargo install --debug`): for the tools that only
# start and drive other programs (wasm-pack, geckodriver, cargo-fuzz), where optimizing is most
# of the install's time and none of the tests'. Measured on this 2-core machine, one after
# another: wasm-pack 206 s -> 110 s, geckodriver 175 s -> 110 s, cargo-fuzz 47 s -> 30 s.
# wasm-bindgen-cli stays `release`: it rewrites every browser-test binary's module once per
# browser, and the page's; a debug build took 4.3-5.0 s on the page's 5.7 MB module where the
# release build takes 1.1 s (it installed in 126 s instead of 240 s). opt-level 1 saved only
# 12 % of the three installs; installing the three at once was slower than one after another.
cargo_install_tool() {
    local name="$1" bin="$2" version="$3" crate="$4" profile="$5" fallback="${6:-}"
    step_begin "$name"
    local profile_flag=()
    case "$profile" in
        release) ;;
        debug) profile_flag=(--debug) ;;
        *) step_fail "cargo_install_tool: profile must be release or debug, not '$profile'" ;;
    esac
    if [[ "$(tool_version "$bin")" == "$version" ]]; then
        step_end "already present"
        return
    fi
    local quiet=0
    [[ "$fallback" == fallback-unlocked ]] && quiet=1
    if QUIET_FAILURE=$quiet run_logged "$crate" \
        cargo install "${profile_flag[@]}" --force --locked "$crate" --version "$version"; then
        :
    elif [[ "$fallback" == fallback-unlocked ]]; then
        say "$name ... --locked failed, retrying without --locked"
        run_logged "$crate-unlocked" cargo install "${profile_flag[@]}" --force "$crate" \
            --version "$version" \
            || step_fail "cargo install $crate $version"
    else
        step_fail "cargo install --locked $crate $version"
    fi
    [[ "$(tool_version "$bin")" == "$version" ]] \
        || step_fail "$bin --version does not report $version after install"
    step_end "ok"
}

# --- preconditions -----------------------------------------------------------------------------

for tool in rustup cargo; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        say "ERROR: '$tool' not found (looked on PATH and in \$HOME/.cargo/bin)." >&2
        say "Install Rust with rustup first; this script adds targets, components and tools." >&2
        exit 1
    fi
done
if [[ "$(id -u)" != 0 ]]; then
    say "WARNING: not running as root; apt-get steps will fail if packages are missing." >&2
fi

TOTAL_START="$(now_us)"

# --- 1. Rust target and components ------------------------------------------------------------

step_begin "wasm32 target"
installed_targets="$(rustup target list --installed)"
if grep -qx 'wasm32-unknown-unknown' <<<"$installed_targets"; then
    step_end "already present"
else
    run_logged rustup-target rustup target add wasm32-unknown-unknown \
        || step_fail "rustup target add wasm32-unknown-unknown"
    step_end "ok"
fi

step_begin "rustfmt + clippy components"
missing_components=()
installed_components="$(rustup component list --installed)"
for c in rustfmt clippy; do
    grep -q "^$c" <<<"$installed_components" || missing_components+=("$c")
done
if [[ ${#missing_components[@]} -eq 0 ]]; then
    step_end "already present"
else
    run_logged rustup-components rustup component add "${missing_components[@]}" \
        || step_fail "rustup component add ${missing_components[*]}"
    step_end "ok"
fi

# --- 2. Debian packages ------------------------------------------------------------------------
# clang + llvm (llvm-ar): compile SQLite's C for wasm32; build-essential + pkg-config: native
# builds and cargo install. wasm-opt comes from npm (step 4), not Debian: Debian 12's binaryen 108
# breaks our modules. node/npm: Debian's packages, only when the commands are missing (a
# NodeSource nodejs, which bundles npm, conflicts with Debian's npm package).

apt_packages=(build-essential pkg-config clang llvm)
command -v node >/dev/null 2>&1 || apt_packages+=(nodejs)
command -v npm >/dev/null 2>&1 || apt_packages+=(npm)
if [[ "$SETUP_SKIP_BROWSERS" != 1 ]]; then
    apt_packages+=(chromium chromium-driver firefox-esr)
fi

step_begin "apt packages (${apt_packages[*]})"
missing_packages=()
for p in "${apt_packages[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]]; then
        missing_packages+=("$p")
    fi
done
if [[ ${#missing_packages[@]} -eq 0 ]]; then
    step_end "already present"
else
    say "$STEP_NAME ... missing: ${missing_packages[*]}"
    run_logged apt-update apt-get update || step_fail "apt-get update"
    run_logged apt-install apt-get install -y --no-install-recommends "${missing_packages[@]}" \
        || step_fail "apt-get install ${missing_packages[*]}"
    step_end "ok"
fi

# --- 2b. the JavaScript peers' npm packages (web/peers) ------------------------------------------
# The benchmark page's peers (SQLite WASM, wa-sqlite, PGlite) are npm packages pinned in
# web/peers/package-lock.json; `npm ci` installs exactly those into web/peers/node_modules and
# web/build.sh copies the files the page loads. Nothing is fetched at run time.

# node and npm themselves come with the apt step above (only when missing).
# Every package in the lock file is installed at its locked version (else `npm ci`).
peers_installed() {
    (cd web/peers && node -e '
        const lock = require("./package-lock.json");
        for (const [path, meta] of Object.entries(lock.packages)) {
            if (!path) continue;
            let version = null;
            try { version = require("./" + path + "/package.json").version; } catch {}
            if (version !== meta.version) process.exit(1);
        }')
}

step_begin "npm packages (web/peers)"
if peers_installed; then
    step_end "already present"
else
    (cd web/peers && run_logged npm-ci npm ci --no-audit --no-fund --ignore-scripts) \
        || step_fail "npm ci in web/peers"
    peers_installed || step_fail "web/peers/node_modules does not match package-lock.json after npm ci"
    step_end "ok"
fi

# --- 3. cargo-installed tools ------------------------------------------------------------------

cargo_install_tool "wasm-pack $WASM_PACK_VERSION" wasm-pack "$WASM_PACK_VERSION" wasm-pack debug

if [[ "$SETUP_SKIP_BROWSERS" != 1 ]]; then
    cargo_install_tool "geckodriver $GECKODRIVER_VERSION" geckodriver "$GECKODRIVER_VERSION" geckodriver \
        debug
else
    step_begin "geckodriver $GECKODRIVER_VERSION"
    step_end "skipped (SETUP_SKIP_BROWSERS=1)"
fi

# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly.
lock_wasm_bindgen_version() {
    [[ -f Cargo.lock ]] || return 0
    awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/^version = "|"$/, ""); print; exit }' Cargo.lock
}

step_begin "Cargo.lock"
if [[ ! -f Cargo.lock ]]; then
    run_logged generate-lockfile cargo generate-lockfile || step_fail "cargo generate-lockfile"
    step_end "ok (generated)"
elif [[ -z "$(lock_wasm_bindgen_version)" ]]; then
    # Adds dependencies declared since the lock was written, without upgrading others.
    run_logged cargo-metadata cargo metadata --format-version 1 \
        || step_fail "cargo metadata (is the workspace's Cargo.toml valid?)"
    step_end "ok (refreshed)"
else
    step_end "already present"
fi

WASM_BINDGEN_VERSION="$(lock_wasm_bindgen_version)"
if [[ -z "$WASM_BINDGEN_VERSION" ]]; then
    step_begin "wasm-bindgen-cli"
    step_end "skipped (no wasm-bindgen in Cargo.lock)"
else
    cargo_install_tool "wasm-bindgen-cli $WASM_BINDGEN_VERSION" wasm-bindgen \
        "$WASM_BINDGEN_VERSION" wasm-bindgen-cli release fallback-unlocked
fi

# --- 4. wasm-opt: binaryen from npm, pinned by tools/binaryen/package-lock.json -----------------

binaryen_dir="$ROOT/tools/binaryen"
binaryen_want="$(node -e 'process.stdout.write(require(process.argv[1]).dependencies.binaryen)' \
    "$binaryen_dir/package.json")"
step_begin "binaryen $binaryen_want (npm ci in tools/binaryen)"
binaryen_have="$("$binaryen_dir/node_modules/.bin/wasm-opt" --version 2>/dev/null \
    | grep -oE '[0-9]+' | head -n 1 || true)"
if [[ -n "$binaryen_have" && "$binaryen_have" == "${binaryen_want%%.*}" ]]; then
    step_end "already present"
else
    run_logged npm-ci-binaryen npm ci --prefix "$binaryen_dir" --no-audit --no-fund \
        || step_fail "npm ci in tools/binaryen"
    step_end "ok"
fi

# --- 5. fuzzing: the nightly toolchain and cargo-fuzz (fuzz/, test.sh gate "fuzz (short)") ----

step_begin "nightly toolchain (minimal profile)"
if rustup toolchain list | grep -q '^nightly-'; then
    step_end "already present"
else
    run_logged rustup-nightly rustup toolchain install nightly --profile minimal \
        || step_fail "rustup toolchain install nightly --profile minimal"
    step_end "ok"
fi

cargo_install_tool "cargo-fuzz $CARGO_FUZZ_VERSION" cargo-fuzz "$CARGO_FUZZ_VERSION" cargo-fuzz debug

say "done in $(fmt_secs $(( $(now_us) - TOTAL_START )))"
