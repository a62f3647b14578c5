#!/usr/bin/env bash
# The web page's tests: builds the wasm preset (build-wasm/web), then runs
#   tests/web/same_numbers.mjs  the WebAssembly module under node against the native binary, and
#   tests/web/browser_test.mjs  the page in headless Chromium (playwright-core, axe-core).
# Installs nothing: run `scripts/setup.sh --web` once, and build the native binary first
# (`cmake --preset release && cmake --build --preset release`; KVPLAN_BIN=path to use another).
# Extra arguments go to the browser test (e.g. --screenshot docs/web.png).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
kvplan_bin=${KVPLAN_BIN:-build/kvplan}
for need in em++ node /usr/bin/chromium tests/web/node_modules/playwright-core tests/web/node_modules/axe-core "$kvplan_bin"; do
  if [[ ! -e "$need" ]] && ! command -v "$need" >/dev/null; then
    echo "web-test: $need is missing: run scripts/setup.sh --web (and build the release preset)" >&2
    exit 2
  fi
done

start=$(date +%s)
cmake --preset wasm >/dev/null
cmake --build --preset wasm
built=$(date +%s)
node tests/web/same_numbers.mjs --web build-wasm/web --kvplan "$kvplan_bin"
node tests/web/browser_test.mjs --web build-wasm/web --kvplan "$kvplan_bin" "$@"
echo "web-test: passed (build $((built - start)) s, tests $(($(date +%s) - built)) s)"
