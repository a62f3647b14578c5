#!/usr/bin/env bash
# Are two kvplan binaries' answers byte-identical? The check a speed-up of fit, max or the engines
# runs before each commit: `kvplan fit` under every engine at several settings in three formats,
# `kvplan max --format json` of every catalog model under every engine, and plans of the Ollama
# tags (GGUF blobs sized tensor by tensor) under llama.cpp and Ollama. stdout, stderr and the exit
# code of each command are compared.
#
# Usage: scripts/fit_identical.sh BEFORE_BINARY AFTER_BINARY [WORK_DIR]
set -u
before=${1:?usage: fit_identical.sh BEFORE AFTER [WORK_DIR]}
after=${2:?usage: fit_identical.sh BEFORE AFTER [WORK_DIR]}
work=${3:-$(mktemp -d)}
mkdir -p "$work/before" "$work/after"

commands=()
runtimes=(generic llama.cpp ollama vllm sglang trtllm)
settings=(
  "--gpu 4090 --ctx 32k"
  "--gpu h100 --ctx 128k"
  "--gpu 3090 --ctx 8k"
  "--gpu 24GiB --ctx 8k --batch 4"
  "--gpu a100-80gb --ctx 4k --budget 40GiB"
  "--gpu l4 --used 4GiB"
  "--gpu 2x4090 --ctx 32k"
)
for runtime in "${runtimes[@]}"; do
  for setting in "${settings[@]}"; do
    commands+=("fit $setting --runtime $runtime")
    commands+=("fit $setting --runtime $runtime --format json")
    commands+=("fit $setting --runtime $runtime --all --format csv")
  done
done
# The engines' own settings that change what llama.cpp and Ollama price.
for extra in "--ollama-version 0.5.12" "--ollama-version 0.20.0" "--num-gpu 20" "--kv-cache-type q8_0" \
             "--flash-attention 0" "--num-parallel 2"; do
  commands+=("fit --gpu 4090 --ctx 16k --runtime ollama $extra --format json")
  commands+=("fit --gpu 5090+3090 --ctx 8k --runtime ollama $extra --all --format csv")
done
for extra in "--ram 64GiB" "-fa off" "--kv-unified -np 4" "-ngl 20" "-ctk q8_0 -ctv q8_0" "-ub 1024" "-ts 3,1"; do
  commands+=("fit --gpu 4090 --ctx 16k --runtime llama.cpp $extra --format json")
  commands+=("fit --gpu 2x3090 --ctx 8k --runtime llama.cpp $extra --all --format csv")
done
commands+=("fit --gpu 4090 --ctx 32k --runtime llama.cpp --ram 64GiB -ngl auto --all --format csv")

models=$("$before" models --format json | sed -n 's/^      "id": "\(.*\)",$/\1/p')
for model in $models; do
  for runtime in "${runtimes[@]}"; do
    commands+=("max --model $model --gpu 4090 --ctx 8k --runtime $runtime --format json")
  done
done
tags=(gemma3:12b gemma3:27b llama3.1:70b llama3.1:8b llama3.2:1b llama3.2:3b llama3.3:70b qwen2.5:14b qwen2.5:32b
      qwen2.5:72b qwen2.5:7b qwen3:14b qwen3:32b qwen3:8b qwen3:8b-q8_0 qwen3:32b-q4_k_s gpt-oss:20b deepseek-r1:671b llama3.1:8b-q4_k_m gemma3:27b-q8_0)
for tag in "${tags[@]}"; do
  for runtime in llama.cpp ollama; do
    commands+=("--model $tag --gpu 4090 --ctx 16k,64k --runtime $runtime --kv-dtype all --format json")
    commands+=("--model $tag --gpu 3090+3060 --ctx 8k --batch 2 --runtime $runtime")
    commands+=("max --model $tag --gpu 4090 --ctx 8k --runtime $runtime --format json")
  done
  commands+=("--model $tag --gpu 4090 --ctx 32k --runtime llama.cpp -ngl 10 --ram 32GiB --format json")
  commands+=("--model $tag --gpu 12GiB --ctx 32k --runtime ollama --ollama-version 0.5.12")
done

differ=0
i=0
for command in "${commands[@]}"; do
  i=$((i + 1))
  for side in before after; do
    binary=$before
    [ "$side" = after ] && binary=$after
    # shellcheck disable=SC2086  # the command is words
    "$binary" $command >"$work/$side/$i.out" 2>"$work/$side/$i.err"
    echo "exit $?" >>"$work/$side/$i.err"
  done
  if ! cmp -s "$work/before/$i.out" "$work/after/$i.out" || ! cmp -s "$work/before/$i.err" "$work/after/$i.err"; then
    echo "DIFFERS: kvplan $command ($work/{before,after}/$i.*)"
    differ=$((differ + 1))
  fi
done
bytes=$(cat "$work"/before/*.out | wc -c)
echo "$i commands, $bytes bytes of output: $differ differ"
[ "$differ" -eq 0 ]
