#!/usr/bin/env bash
# Encode throughput of the built-in tiktoken encodings (gpt2, cl100k_base, o200k_base)
# against OpenAI's tiktoken (npm/WASM) on the same ~1 MB corpus, in the same run,
# single-threaded; prints tokens/s of both and the ratio perfgate/tiktoken, for perfgate
# with its piece cache warm and cold (tiktoken has no cache). METRIC=tokens/cpu-s compares
# per CPU-second instead, which is steadier on a busy machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${PERFGATE_CACHE:-$HOME/.cache/perfgate}"
out=bench/out
mkdir -p "$out"
corpus="$out/tiktoken_corpus.json"
metric="${METRIC:-tokens/s}"
PERFGATE_TIKTOKEN_CORPUS="$PWD/$corpus" GOMAXPROCS=1 \
  go test ./tokenizer -run '^$' -bench 'BenchmarkBuiltinEncode' -benchtime "${BENCHTIME:-3x}" | tee "$out/tiktoken_go.txt"
NODE_PATH="$cache/npm/node_modules" node bench/tokenizer/tiktoken_bench.js "$corpus" | tee "$out/tiktoken_node.txt"
gorate() { awk -v n="BenchmarkBuiltinEncode/$1" -v m="$metric" '$1 ~ "^"n"(-[0-9]+)?$" { for (i = 1; i < NF; i++) if ($(i+1) == m) print $i }' "$out/tiktoken_go.txt"; }
echo "($metric, one core)"
echo "encoding     perfgate warm   perfgate cold        tiktoken   warm/tt   cold/tt"
while read -r name wall cpu; do
  peer=$wall
  [ "$metric" = tokens/cpu-s ] && peer=$cpu
  awk -v n="$name" -v a="$(gorate "$name")" -v c="$(gorate "$name/cold")" -v b="$peer" \
    'BEGIN { printf "%-12s %13.0f %15.0f %15.0f %8.2fx %8.2fx\n", n, a, c, b, a / b, c / b }'
done < "$out/tiktoken_node.txt"
