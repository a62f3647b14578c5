#!/usr/bin/env bash
# Runs the kvplan binary on every hostile input of cases.txt, and on the write-error cases (a full
# disk, a closed stdout, a closed pipe), each under a memory and CPU limit, and checks the
# contract: the exit code expected; on a refusal nothing on stdout and exactly one line on stderr
# starting "kvplan: error: ", of at most 1,100 bytes, with no control character in it.
#
#   tests/hostile/run.sh build/kvplan            # what ctest runs (test hostile.corpus)
#   tests/hostile/run.sh build/kvplan --no-as    # a sanitized build: no address-space limit (ASan
#                                                # reserves terabytes) and 6x the time (ASan runs slower)
#
# Large inputs are generated here, sparse where they can be (a 1 TiB GGUF takes 4 KB of disk),
# and removed at the end: nothing large is stored in the repository.
set -u
kvplan=$(realpath "$1")
as_limit=--as=1073741824
cpu_seconds=10
wall_seconds=30
if [ "${2:-}" = --no-as ]; then
  as_limit=
  cpu_seconds=60
  wall_seconds=180
fi
here=$(cd "$(dirname "$0")" && pwd)
gen=$(mktemp -d "${TMPDIR:-/tmp}/kvplan-hostile-XXXXXX")
trap 'rm -rf "$gen"' EXIT

# --- little-endian GGUF pieces (printf's \x escapes), enough for headers that lie.
le() {  # le BYTES VALUE
  local v=$2 i out=
  for ((i = 0; i < $1; i++)); do out+=$(printf '\\x%02x' $((v & 255))); v=$((v >> 8)); done
  printf '%b' "$out"
}
gstr() { le 8 ${#1}; printf '%s' "$1"; }
gguf_head() { printf 'GGUF'; le 4 3; le 8 0; le 8 "$1"; }  # version 3, no tensors, $1 keys

# Arrays of empty strings, declared 2^37, 2^36 and 2^24 long, in sparse files of 1 TiB.
for n in 37 36 24; do
  f=$gen/strings-2p$n.gguf
  { gguf_head 2; gstr general.architecture; le 4 8; gstr llama
    gstr tokenizer.ggml.tokens; le 4 9; le 4 8; le 8 $((1 << n)); } > "$f"
  truncate -s 1T "$f"
done
truncate -s 1G "$gen/zeros-1gib.gguf"
truncate -s 1G "$gen/zeros-1gib.json"
# 8 million keys declared (the header alone: the count is refused before any key is read).
{ gguf_head 8000000; gstr general.architecture; le 4 8; gstr llama; } > "$gen/keys-8m.gguf"
# 65,536 one-byte keys besides the architecture, one more than kvplan keeps: refused, memory bounded.
{ gguf_head 65537; gstr general.architecture; le 4 8; gstr llama
  printf '\x08\x00\x00\x00\x00\x00\x00\x00k%07d\x00\x00\x00\x00\x01' $(seq 0 65535)
} > "$gen/keys-65536.gguf"
# An architecture that clears the screen.
{ gguf_head 1; gstr general.architecture; le 4 8; gstr $'\x1b[2Jx'; } > "$gen/escape-arch.gguf"
# 100,000 layers, each with 1,000 state entries (50 KB that once took 2.4 GB).
{ printf '{"name":"x","params":1000,"weight_dtype":"bf16","layers":100000,"attention_heads":1,"head_dim":1,'
  printf '"layer_pattern":["linear"],"linear_state":['
  printf '{"name":"s%d","elements":1,"dtype":"f32"},' $(seq 1 999)
  printf '{"name":"s0","elements":1,"dtype":"f32"}]}'; } > "$gen/spec-100000-layers.json"
# FIFOs: a model JSON, a folder's config.json, a folder's index, a GGUF.
mkfifo "$gen/fifo.json" "$gen/fifo.gguf"
mkdir -p "$gen/fifo-config" "$gen/fifo-index"
mkfifo "$gen/fifo-config/config.json" "$gen/fifo-index/model.safetensors.index.json"
cp "$here/../fixtures/hf/qwen3-8b/config.json" "$gen/fifo-index/"

long=$(printf 'a%.0s' $(seq 26000))
huge=$(printf 'x%.0s' $(seq 100000))
ctx3000=$(seq -s, 1000 3999)
dtype300=$(printf 'fp16,fp8,int4,%.0s' $(seq 100)); dtype300=${dtype300%,}

failures=0 runs=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# check NAME EXPECTED CODE OUTFILE ERRFILE
check() {
  local name=$1 expected=$2 code=$3 out=$4 err=$5
  runs=$((runs + 1))
  if [ "$code" != "$expected" ]; then fail "$name: exit $code, expected $expected; stderr: $(head -c 300 "$err")"; return; fi
  if [ "$expected" = 0 ]; then
    [ -s "$out" ] || fail "$name: no output"
    [ -s "$err" ] && fail "$name: stderr not empty: $(head -c 300 "$err")"
    LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n\t' < "$out") && fail "$name: a control character on stdout"
    return
  fi
  [ -s "$out" ] && fail "$name: stdout not empty"
  [ "$(wc -l < "$err")" = 1 ] || fail "$name: $(wc -l < "$err") lines on stderr: $(head -c 300 "$err")"
  head -c 15 "$err" | grep -q '^kvplan: error: ' || fail "$name: stderr does not start with 'kvplan: error: '"
  [ "$(wc -c < "$err")" -le 1100 ] || fail "$name: $(wc -c < "$err") bytes on stderr"
  LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' < "$err") && fail "$name: a control character on stderr"
}

limited() { prlimit $as_limit --cpu=$cpu_seconds -- timeout $wall_seconds "$kvplan" "$@"; }

while read -r expected rest; do
  case $expected in ''|'#'*) continue ;; esac
  args=()
  for word in $rest; do
    case $word in
      '{empty}') args+=("") ;;
      *) word=${word//\{in\}/$here/inputs}; word=${word//\{gen\}/$gen}; word=${word//\{long\}/$long}
         word=${word//\{huge\}/$huge}; word=${word//\{ctx3000\}/$ctx3000}; word=${word//\{dtype300\}/$dtype300}
         args+=("$word") ;;
    esac
  done
  (cd "$gen" && limited "${args[@]}" > "$gen/out" 2> "$gen/err" < /dev/null)
  code=$?
  check "kvplan ${rest:0:120}" "$expected" "$code" "$gen/out" "$gen/err"
done < "$here/cases.txt"

# 5. Write errors: a full disk and a closed stdout are exit 5 with one line; a closed pipe with
# SIGPIPE ignored is exit 5 and quiet, as other Unix tools are about a reader that went away.
plan=(--model llama3.1-8b --ctx 1k --gpu 24GiB)
limited "${plan[@]}" > /dev/full 2> "$gen/err"
check "stdout /dev/full" 5 $? /dev/null "$gen/err"
limited "${plan[@]}" >&- 2> "$gen/err"
check "stdout closed" 5 $? /dev/null "$gen/err"
limited --version > /dev/full 2> "$gen/err"
check "--version to /dev/full" 5 $? /dev/null "$gen/err"
code=$( (trap '' PIPE; (sleep 0.3; limited "${plan[@]}" 2> "$gen/err"; echo $? > "$gen/code") | true); cat "$gen/code")
runs=$((runs + 1))
[ "$code" = 5 ] || fail "closed pipe, SIGPIPE ignored: exit $code, expected 5"
[ -s "$gen/err" ] && fail "closed pipe: stderr not empty: $(head -c 200 "$gen/err")"

echo "hostile corpus: $runs runs, $failures failures"
[ "$failures" = 0 ]
