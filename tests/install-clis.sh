#!/usr/bin/env bash
# Installs the agent CLIs that cinch's real-CLI tests drive (claude, codex, gemini, and the ACP
# agents qwen, opencode, claude-agent-acp, codex-acp, copilot, kilo, cline and droid) from npm, at pinned
# versions, into a cache directory outside the clone, and prints that install's bin
# directory as the last line of stdout. Safe to run again: an install that answers `--version` is
# kept as it is.
#
# The versions are the ones ../shared/realcli/README.md, ../shared/fixtures/acp/README.md and the
# README's "More harnesses" measured against the mock model; the tests assert on their exact output, so a bump is a
# deliberate change here and in the tests.
#
#   CINCH_CLI_DIR   where to install (default ~/.cache/cinch/clis/<hash of the pinned versions>)
#   NPM             the npm to use (default npm)
#
# Needs node (>= 20, for gemini) and npm; reaches only the npm registry.
set -euo pipefail

PINNED=(
    "@anthropic-ai/claude-code@2.1.197"
    "@openai/codex@0.171.0"
    "@google/gemini-cli@0.61.0"
    "@qwen-code/qwen-code@0.15.10"
    "opencode-ai@1.18.33"
    "@zed-industries/claude-agent-acp@0.23.1"
    "@zed-industries/codex-acp@0.16.0"
    "@zed-industries/codex-acp-linux-x64@0.16.0"
    "@github/copilot@1.0.102"
    "@kilocode/cli@7.7.7"
    "cline@3.0.65"
    "droid@0.215.0"
)
# What each CLI's `--version` must print, so a stale or half-finished install is redone.
EXPECT=(
    "claude 2.1.197"
    "codex 0.171.0"
    "gemini 0.61.0"
    "qwen 0.15.10"
    "opencode 1.18.33"
    "copilot 1.0.102"
    "kilo 7.7.7"
    "cline 3.0.65"
    "droid 0.215.0"
)
NPM=${NPM:-npm}

# A new pin set gets a new directory, so installs of different versions never mix.
hash=$(printf '%s\n' "${PINNED[@]}" | sha256sum | cut -c1-16)
dir=${CINCH_CLI_DIR:-${HOME:?HOME must be set}/.cache/cinch/clis/$hash}
bin=$dir/node_modules/.bin

log() { printf 'install-clis: %s\n' "$*" >&2; }

installed() {
    local entry cli want got spec name
    # Every package at its pin (the ACP adapters have no quick --version: they wait on stdin).
    for spec in "${PINNED[@]}"; do
        name=${spec%@*}
        grep -q "\"version\": *\"${spec##*@}\"" "$dir/node_modules/$name/package.json" 2>/dev/null || return 1
    done
    # kilo is its binary, not its launcher (see below).
    [ "$(readlink "$bin/kilo")" = ../@kilocode/cli/bin/.kilo ] || return 1
    for entry in "${EXPECT[@]}"; do
        cli=${entry%% *}
        want=${entry#* }
        [ -x "$bin/$cli" ] || return 1
        # `timeout` because a broken native binary could hang rather than fail.
        got=$(timeout 60 "$bin/$cli" --version </dev/null 2>/dev/null) || return 1
        case $got in *"$want"*) ;; *) return 1 ;; esac
    done
}

if installed; then
    echo "$bin"
    exit 0
fi

mkdir -p "$dir"
# Two test processes may call this at once; the second waits and then finds the install done.
exec 9>"$dir/.install.lock"
flock 9
if installed; then
    echo "$bin"
    exit 0
fi

command -v node >/dev/null || { log "node is not on PATH"; exit 1; }
command -v "$NPM" >/dev/null || { log "$NPM is not on PATH"; exit 1; }
log "installing ${PINNED[*]} into $dir"
start=$(date +%s)

# A package.json of our own keeps npm from walking up into some parent project.
deps=""
for spec in "${PINNED[@]}"; do
    name=${spec%@*}
    version=${spec##*@}
    deps+="${deps:+,}\"$name\":\"$version\""
done
printf '{"name":"cinch-test-clis","private":true,"dependencies":{%s}}\n' "$deps" >"$dir/package.json"

# --ignore-scripts: the only install scripts these CLIs need are claude-code's and opencode's
# postinstalls and kilo's and droid's, run below (copilot's and cline's launchers find their
# platform's binary package by themselves). The others build or download optional native modules (node-pty, keytar) that gemini
# does without, and would want a compiler or hosts other than the npm registry.
# stdout goes to stderr so that the bin directory stays the last line of our stdout.
(cd "$dir" && "$NPM" install --no-audit --no-fund --no-save --include=optional \
    --ignore-scripts --loglevel=warn) >&2

# claude-code's postinstall copies the native binary of this platform (from an optional
# package) over its bin/claude.exe placeholder.
(cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2
# opencode-ai's links the native binary of this platform (from its optional package) likewise.
(cd "$dir/node_modules/opencode-ai" && node postinstall.mjs) >&2
# kilo's puts this platform's binary at bin/.kilo beside the files it needs. Its `kilo` launcher
# is a node script that runs that binary as a child, to which cinch's sandbox grants no
# /proc/self (the binary aborts without it): the command is the binary itself.
(cd "$dir/node_modules/@kilocode/cli" && node postinstall.mjs) >&2
ln -sfn ../@kilocode/cli/bin/.kilo "$bin/kilo"
# droid's replaces its node launcher with this platform's binary.
(cd "$dir/node_modules/droid" && node install.js) >&2

if ! installed; then
    log "the CLIs do not answer --version as expected after installing:"
    for entry in "${EXPECT[@]}"; do
        cli=${entry%% *}
        log "  $cli: $(timeout 60 "$bin/$cli" --version </dev/null 2>&1 | head -n 3 || true)"
    done
    exit 1
fi
log "installed in $(($(date +%s) - start)) s"
echo "$bin"
