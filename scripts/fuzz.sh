#!/usr/bin/env bash
# Builds kvplan's libFuzzer targets (CMake preset `fuzz`: clang, ASan + UBSan; the same build as
# the `sanitize` preset, so CI compiles kvplan once for both) and runs each for a bounded time,
# as many at a time as there are cores. Fails when any target finds something: a crash, a
# sanitizer report, a leak, an input that takes over 10 s, an allocation over 512 MiB, or a broken
# invariant (an exception other than kvplan::Error, a multi-line CLI error, an undocumented exit
# code, ...). The input that did it is kept in build-fuzz/findings/; replay it with
# build-sanitize/fuzz/kvplan_fuzz_<target> <file>.
#
# Usage: scripts/fuzz.sh [seconds per target, default 30] [target ...]
#   scripts/fuzz.sh                 # every target, 30 s each (what CI runs)
#   scripts/fuzz.sh 3600            # an hour each
#   scripts/fuzz.sh 600 cli gguf_header
#   KVPLAN_FUZZ_JOBS=1 scripts/fuzz.sh   # one target at a time
# The corpus each run grows is kept in build-fuzz/corpus/<target>, so longer runs build on earlier ones.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-30}
[[ $# -gt 0 ]] && shift
binaries=$root/build-sanitize/fuzz  # the fuzz preset's binaryDir (it inherits sanitize)
work=$root/build-fuzz               # absolute: the cli target runs in a directory of its own
jobs=${KVPLAN_FUZZ_JOBS:-$(nproc)}

echo "fuzz: building the fuzz preset (clang, ASan + UBSan)" >&2
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)" >/dev/null

# Seeds: small files from the repository, GGUF files written by the test suite's writer, and
# fuzz/corpus/<target>/ (hand-made seeds and the inputs of past findings, kept as regressions).
seeds=$work/seeds
rm -rf "$seeds"
mkdir -p "$seeds/hf_config"
"$binaries/kvplan_fuzz_gguf_seeds" "$seeds/gguf"
for dir in tests/fixtures/hf/*/; do
  [[ -f "$dir/config.json" ]] || continue
  name=$(basename "$dir")
  {
    cat "$dir/config.json"
    if [[ -f "$dir/model.safetensors.index.json" ]]; then
      printf '\0'
      cat "$dir/model.safetensors.index.json"
    fi
  } >"$seeds/hf_config/$name"
done

declare -A seed_dirs=(
  [spec_json]="$root/models $root/tests/fixtures/specs $root/tests/hostile/inputs"
  [gguf_header]="$seeds/gguf"
  [gguf_model]="$seeds/gguf"
  [units]="$root/fuzz/corpus/units"
  [cli]="$root/fuzz/corpus/cli"
  [hf_config]="$seeds/hf_config $root/fuzz/corpus/hf_config"
  [log]="$root/fuzz/corpus/log $root/tests/fixtures/logs"
)
declare -A dictionaries=(
  [spec_json]=$root/fuzz/json.dict [hf_config]=$root/fuzz/json.dict [gguf_header]=$root/fuzz/gguf.dict
  [gguf_model]=$root/fuzz/gguf.dict [cli]=$root/fuzz/cli.dict
)
# Longest input per target: a flag value is short, a command line longer, files longest.
declare -A max_lengths=([units]=64 [cli]=4096)

targets=("$@")
if ((${#targets[@]} == 0)); then
  for binary in "$binaries"/kvplan_fuzz_*; do
    name=${binary##*/kvplan_fuzz_}
    [[ $name == gguf_seeds ]] || targets+=("$name")
  done
fi
for target in "${targets[@]}"; do
  if [[ ! -x $binaries/kvplan_fuzz_$target ]]; then
    built=("$binaries"/kvplan_fuzz_*)
    echo "fuzz: no target '$target' (built: ${built[*]##*/kvplan_fuzz_})" >&2
    exit 2
  fi
done

# One target: its log in build-fuzz/logs/<target>.log, its exit status in <target>.status.
run_target() {
  local target=$1 corpus=$work/corpus/$1 log=$work/logs/$1.log
  mkdir -p "$corpus"
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512
                 -max_len="${max_lengths[$target]:-65536}" -print_final_stats=1
                 -artifact_prefix="$work/findings/$target-")
  [[ -n ${dictionaries[$target]:-} ]] && options+=(-dict="${dictionaries[$target]}")
  local status=0
  # shellcheck disable=SC2086  # seed_dirs holds several directories
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$binaries/kvplan_fuzz_$target" "${options[@]}" "$corpus" ${seed_dirs[$target]:-} </dev/null >"$log" 2>&1 ||
    status=$?
  echo "$status" >"$work/logs/$target.status"
}

mkdir -p "$work/findings" "$work/logs"
running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
wait

failed=()
printf '%-12s %8s %12s %10s %8s  %s\n' target seconds executions "exec/s" corpus result
for target in "${targets[@]}"; do
  log=$work/logs/$target.log
  if [[ $(cat "$work/logs/$target.status") == 0 ]]; then
    result=ok
  else
    result="FAILED (see ${log#"$root"/})"
    failed+=("$target")
  fi
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  elapsed=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log" | tail -1)
  rate=$( ((${elapsed:-0} > 0)) && echo $((${executions:-0} / elapsed)) || echo "-")
  printf '%-12s %8s %12s %10s %8s  %s\n' "$target" "${elapsed:-?}" "${executions:-?}" "$rate" \
    "$(find "$work/corpus/$target" -type f | wc -l)" "$result"
done

if ((${#failed[@]})); then
  for target in "${failed[@]}"; do
    echo "--- $target: end of build-fuzz/logs/$target.log" >&2
    grep -v '^#[0-9]' "$work/logs/$target.log" | tail -40 >&2
  done
  echo "fuzz: findings in: ${failed[*]} (inputs in build-fuzz/findings/)" >&2
  exit 1
fi
