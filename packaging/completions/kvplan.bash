# bash completion for kvplan                                  -*- shell-script -*-
# Installed as share/bash-completion/completions/kvplan. Model and GPU names come from the
# installed binary's own catalogs (`kvplan models`, `kvplan gpus`), so they never go stale.
# shellcheck disable=SC2207  # COMPREPLY=($(compgen ...)): the words never contain spaces

_kvplan_catalog() {
  # First column of `kvplan models` / `kvplan gpus`, without the header line.
  "${1}" "${2}" 2>/dev/null | awk 'NR > 1 { print $1 }'
}

# File names for --model; bash-completion's _filedir when it is loaded.
_kvplan_files() {
  if declare -F _filedir >/dev/null; then
    _filedir '@(json|gguf)'
  else
    local IFS=$'\n'
    COMPREPLY+=($(compgen -f -- "$cur"))
  fi
}

_kvplan() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null; then
    _init_completion -n = || return
  else  # plain bash, without the bash-completion package
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
  fi

  local kvplan_bin="${words[0]}"
  local kv_dtypes="fp32 fp16 bf16 fp8 fp8_e4m3 fp8_e5m2 int8 int4 nvfp4 fp4_e2m1 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl auto f16 f32"
  local weight_dtypes="fp32 fp16 bf16 fp8 int8 int4 q4_k_m q4_k_s q5_k_m q5_k_s q6_k q8_0 q4_0 q3_k_m q2_k iq4_xs awq gptq nvfp4"
  local formats="table json csv markdown"
  local options="--model --ctx --max-model-len --gpu --kv-dtype --kv-cache-dtype --weight-dtype --batch
                 --overhead --util --gpu-memory-utilization --format --no-color --check --mtp-layers --help --version
                 --wide --weights --params --gpus --text-only --unified
                 --speed --budget --free --used --ignore-used --ram --ram-bandwidth --quiet --quality
                 --family --min-params --max-params --top --all
                 --runtime --ctx-size --parallel --batch-size --ubatch-size --cache-type-k --cache-type-v --flash-attn
                 --kv-unified --swa-full --n-gpu-layers --gpu-layers --split-mode --tensor-split --main-gpu
                 --tensor-parallel-size --decode-context-parallel-size --pipeline-parallel-size --pp-layer-partition --dtype --block-size --max-num-seqs --max-num-batched-tokens --kv-cache-memory
                 --vllm-version --enable-prefix-caching --disable-hybrid-kv-cache-manager --enforce-eager --speculative-config --allow-long-max-model-len --use-flashinfer-sampler
                 --mem-fraction-static --context-length --tp-size --tp --pp-size --page-size --attention-backend
                 --max-total-tokens --max-running-requests --chunked-prefill-size --swa-full-tokens-ratio
                 --sglang-version --sglang-free-before-load --sglang-free-after-load --cuda-graph-max-bs --disable-piecewise-cuda-graph --speculative-algorithm --speculative-draft-model-path --speculative-draft-model --speculative-num-steps --speculative-eagle-topk --speculative-num-draft-tokens --speculative-token-map --enable-dp-attention --dp-size --dp --allow-overwrite-longer-context-len
                 --kv_cache_free_gpu_memory_fraction --kv_cache_free_gpu_mem_fraction --free_gpu_memory_fraction
                 --max_seq_len --max_batch_size --max_num_tokens --tp_size --pp_size --tokens_per_block --max_tokens
                 --max_gpu_total_bytes --max_attention_window --trtllm-version --trtllm-free-memory --extra_llm_api_options
                 --num-ctx --num-parallel --kv-cache-type --flash-attention --gpu-overhead --num-gpu --num-batch
                 --modelfile --ollama-version"
  local llamacpp_types="f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl"

  # The subcommands: models and gpus take --format, spec takes --model.
  local word
  for word in "${words[@]:1:cword-1}"; do
    if [[ "$word" == models || "$word" == gpus ]]; then
      local sub_options="--format --help"
      [[ "$word" == models ]] && sub_options="--format --architectures --help"
      case "$prev" in
        -f|--format) COMPREPLY=($(compgen -W "table json markdown" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "$sub_options" -- "$cur")) ;;
      esac
      return
    fi
    if [[ "$word" == spec ]]; then
      case "$prev" in
        -m|--model)
          COMPREPLY=($(compgen -W "$(_kvplan_catalog "$kvplan_bin" models)" -- "$cur"))
          _kvplan_files
          ;;
        *) COMPREPLY=($(compgen -W "--model --help" -- "$cur")) ;;
      esac
      return
    fi
  done

  case "$prev" in
    -m|--model)
      COMPREPLY=($(compgen -W "$(_kvplan_catalog "$kvplan_bin" models)" -- "$cur"))
      _kvplan_files
      return ;;
    -g|--gpu)
      COMPREPLY=($(compgen -W "$(_kvplan_catalog "$kvplan_bin" gpus) 24GiB 80GiB" -- "$cur"))
      return ;;
    -k|--kv-dtype|--kv-cache-dtype)
      # A comma-separated list: complete the item after the last comma.
      local head="" tail="$cur"
      if [[ "$cur" == *,* ]]; then head="${cur%,*},"; tail="${cur##*,}"; fi
      COMPREPLY=($(compgen -P "$head" -W "$kv_dtypes" -- "$tail"))
      compopt -o nospace 2>/dev/null
      return ;;
    -w|--weight-dtype) COMPREPLY=($(compgen -W "$weight_dtypes" -- "$cur")); return ;;
    -f|--format) COMPREPLY=($(compgen -W "$formats" -- "$cur")); return ;;
    -c|--ctx|--max-model-len) COMPREPLY=($(compgen -W "8k 32k 64k 128k 32k,64k,128k 1M" -- "$cur")); return ;;
    -u|--util|--gpu-memory-utilization) COMPREPLY=($(compgen -W "0.9 0.95 1.0" -- "$cur")); return ;;
    -b|--batch) COMPREPLY=($(compgen -W "1 4 8 16 32 64" -- "$cur")); return ;;
    --overhead) COMPREPLY=($(compgen -W "0 1GiB 2GiB 4GiB" -- "$cur")); return ;;
    --mtp-layers) COMPREPLY=($(compgen -W "0 1 all" -- "$cur")); return ;;
    --quality) COMPREPLY=($(compgen -W "lossless fp8 int8 int4" -- "$cur")); return ;;
    --min-params|--max-params) COMPREPLY=($(compgen -W "1B 7B 14B 32B 70B" -- "$cur")); return ;;
    --runtime) COMPREPLY=($(compgen -W "generic llama.cpp vllm sglang trtllm ollama" -- "$cur")); return ;;
    --tensor-parallel-size|-tp|--tp-size|--tp|--tp_size|--pp-size|--pp_size) COMPREPLY=($(compgen -W "1 2 4 8" -- "$cur")); return ;;
    --mem-fraction-static|--kv_cache_free_gpu_memory_fraction|--kv_cache_free_gpu_mem_fraction|--free_gpu_memory_fraction|--swa-full-tokens-ratio)
      COMPREPLY=($(compgen -W "0.8 0.85 0.9" -- "$cur")); return ;;
    --context-length|--max_seq_len) COMPREPLY=($(compgen -W "8k 32k 128k" -- "$cur")); return ;;
    --page-size|--tokens_per_block) COMPREPLY=($(compgen -W "1 16 32 64 128" -- "$cur")); return ;;
    --attention-backend)
      COMPREPLY=($(compgen -W "fa3 fa4 flashinfer triton torch_native flex_attention aiter wave flashmla cutlass_mla trtllm_mla trtllm_mha ascend intel_amx dual_chunk_flash_attn" -- "$cur")); return ;;
    --max-total-tokens|--max-running-requests|--chunked-prefill-size|--max_batch_size|--max_num_tokens|--max_tokens)
      COMPREPLY=($(compgen -W "256 2048 8192 16384" -- "$cur")); return ;;
    --sglang-version) COMPREPLY=($(compgen -W "0.4.9 0.5.3 0.5.4 0.5.14 latest" -- "$cur")); return ;;
    --trtllm-version) COMPREPLY=($(compgen -W "0.13 0.20 0.21 1.0 1.1 latest" -- "$cur")); return ;;
    --sglang-free-before-load|--sglang-free-after-load|--trtllm-free-memory|--max_gpu_total_bytes)
      COMPREPLY=($(compgen -W "16GiB 40GiB 60GiB" -- "$cur")); return ;;
    --max_attention_window) COMPREPLY=($(compgen -W "1024,1024,1024,1024,1024,131072" -- "$cur")); return ;;
    --split-mode|-sm) COMPREPLY=($(compgen -W "layer row none" -- "$cur")); return ;;
    --tensor-split|-ts) COMPREPLY=($(compgen -W "1,1 3,1 1,1,1,1" -- "$cur")); return ;;
    --main-gpu|-mg) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return ;;
    --num-ctx) COMPREPLY=($(compgen -W "2048 4096 8192 32768 131072" -- "$cur")); return ;;
    --num-parallel) COMPREPLY=($(compgen -W "1 2 4" -- "$cur")); return ;;
    --kv-cache-type) COMPREPLY=($(compgen -W "f16 q8_0 q4_0" -- "$cur")); return ;;
    --flash-attention) COMPREPLY=($(compgen -W "1 0 true false" -- "$cur")); return ;;
    --gpu-overhead) COMPREPLY=($(compgen -W "0 536870912 1GiB" -- "$cur")); return ;;
    --num-gpu) COMPREPLY=($(compgen -W "0 20 99" -- "$cur")); return ;;
    --num-batch) COMPREPLY=($(compgen -W "256 512 1024 2048" -- "$cur")); return ;;
    --modelfile) _kvplan_files; return ;;
    --ollama-version) COMPREPLY=($(compgen -W "0.5.12 0.6.8 0.11.3 0.20.0 0.30.0 latest" -- "$cur")); return ;;
    --tensor-parallel-size|-tp|--decode-context-parallel-size|-dcp|--pipeline-parallel-size|-pp) COMPREPLY=($(compgen -W "1 2 4 8" -- "$cur")); return ;;
    --dtype) COMPREPLY=($(compgen -W "auto half float16 bfloat16 float float32" -- "$cur")); return ;;
    --block-size) COMPREPLY=($(compgen -W "16 32 64 128" -- "$cur")); return ;;
    --max-num-seqs) COMPREPLY=($(compgen -W "64 256 1024" -- "$cur")); return ;;
    --max-num-batched-tokens) COMPREPLY=($(compgen -W "2048 8192 16384" -- "$cur")); return ;;
    --kv-cache-memory) COMPREPLY=($(compgen -W "8GiB 16GiB 32GiB" -- "$cur")); return ;;
    --speculative-config) COMPREPLY=("'{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'"); return ;;
    --vllm-version) COMPREPLY=($(compgen -W "0.10 0.11 0.19 0.21 latest" -- "$cur")); return ;;
    --ctx-size) COMPREPLY=($(compgen -W "0 4096 32768 131072" -- "$cur")); return ;;
    --parallel|-np) COMPREPLY=($(compgen -W "1 2 4 8" -- "$cur")); return ;;
    --batch-size|--ubatch-size|-ub) COMPREPLY=($(compgen -W "512 1024 2048" -- "$cur")); return ;;
    --cache-type-k|--cache-type-v|-ctk|-ctv) COMPREPLY=($(compgen -W "$llamacpp_types" -- "$cur")); return ;;
    --flash-attn|-fa) COMPREPLY=($(compgen -W "on off auto" -- "$cur")); return ;;
    --n-gpu-layers|--gpu-layers|-ngl) COMPREPLY=($(compgen -W "all auto 0" -- "$cur")); return ;;
  esac

  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif ((cword == 1)); then
    COMPREPLY=($(compgen -W "models gpus spec max sweep advise plot fit explain check $options" -- "$cur"))
  fi
}

complete -F _kvplan kvplan
