#!/usr/bin/env bash
# Installs what kvplan needs on Debian 12, skipping whatever is already there, so it is cheap to
# run before every build. `--tests` also installs the pinned npm packages the test suite uses;
# `--clang` installs clang for the sanitize and fuzz presets; `--web` installs Debian's emscripten
# (the wasm preset), chromium and the pinned npm packages of the browser test (docs/web.md).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
with_tests=false
with_clang=false
with_web=false
for arg in "$@"; do
  [[ "$arg" == "--tests" ]] && with_tests=true
  # clang and its sanitizer/libFuzzer runtimes, for the sanitize and fuzz presets.
  [[ "$arg" == "--clang" ]] && with_clang=true
  # The web page: emscripten for the wasm preset, chromium + playwright-core for its browser test.
  [[ "$arg" == "--web" ]] && with_web=true
done

# lld links the release binary with the plain command's code placed together (cmake/KvplanStaticLink.cmake).
packages=(cmake ninja-build g++ lld libcli11-dev nlohmann-json3-dev libfmt-dev catch2 libyaml-cpp-dev)
if $with_tests && ! command -v node >/dev/null; then packages+=(nodejs npm); fi
# The plot tests: xmllint parses the SVG, headless Chromium renders it once (skipped without it).
if $with_tests; then packages+=(libxml2-utils chromium); fi
if $with_clang; then packages+=(clang libclang-rt-14-dev); fi
if $with_web; then
  packages+=(emscripten chromium)
  command -v node >/dev/null || packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

npm_dirs=()
if $with_tests; then npm_dirs+=(tests/schema tests/llamacpp); fi
# tests/web: playwright-core (it drives /usr/bin/chromium and downloads no browser) and axe-core.
if $with_web; then npm_dirs+=(tests/web); fi
if ((${#npm_dirs[@]})); then
  # npm ci installs exactly the locked versions; a copy of the lock it installed from marks it done.
  # tests/llamacpp: node-llama-cpp 3.21.1 and its CPU build only; its .npmrc omits the optional
  # CUDA/Vulkan/other-platform builds and skips install scripts (nothing is downloaded or compiled).
  for dir in "${npm_dirs[@]}"; do
    stamp="$root/$dir/node_modules/.kvplan-installed-lock"
    if ! cmp -s "$root/$dir/package-lock.json" "$stamp"; then
      echo "setup: npm ci in $dir" >&2
      (cd "$root/$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null)
      cp "$root/$dir/package-lock.json" "$stamp"
    fi
  done
fi
