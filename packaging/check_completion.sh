#!/usr/bin/env bash
# The packaging.completion test: the bash completion, loaded into plain bash (no bash-completion
# package needed), completes options, catalog names from the binary and dtype lists; the zsh one
# parses (when zsh is installed).
# Usage: check_completion.sh <directory holding the kvplan binary>
# No errexit: completion functions run commands that fail outside an interactive completion.
export PATH="$1:$PATH"
# shellcheck source=completions/kvplan.bash
source "$(dirname "$0")/completions/kvplan.bash"

failures=0
expect() {  # expect "<command line>" "<word that must be offered>"
  read -r -a COMP_WORDS <<<"$1"
  [[ $1 == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _kvplan
  if [[ " ${COMPREPLY[*]} " != *" $2 "* ]]; then
    echo "completing '$1': expected '$2' among: ${COMPREPLY[*]:0:20}" >&2
    failures=$((failures + 1))
  fi
}
expect "kvplan --mo" --model
expect "kvplan --model llama3.1-" llama3.1-8b
expect "kvplan --gpu h1" h100
expect "kvplan --kv-dtype fp16,q" fp16,q8_0
expect "kvplan --format " markdown
expect "kvplan " models
expect "kvplan " fit
expect "kvplan fit --quality " int8
expect "kvplan models --f" --format
expect "kvplan spec --model qwen3-8" qwen3-8b
expect "kvplan --runtime " llama.cpp
expect "kvplan --runtime " sglang
expect "kvplan --attention-backend flash" flashmla
expect "kvplan --cache-type-k q" q8_0
((failures == 0)) && echo "bash completion: all completions offered"
# zsh, when installed: the completion function at least parses.
if command -v zsh >/dev/null; then
  zsh -n "$(dirname "$0")/completions/_kvplan" || failures=$((failures + 1))
fi
exit $((failures > 0))
