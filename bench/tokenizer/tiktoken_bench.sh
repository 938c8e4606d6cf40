#!/usr/bin/env bash
# Encode throughput of the built-in tiktoken encodings (gpt2, cl100k_base, o200k_base)
# against OpenAI's tiktoken (npm/WASM) on the same ~1 MB corpus, in the same run,
# single-threaded; prints tokens/s of both and the ratio perfgate/tiktoken.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${PERFGATE_CACHE:-$HOME/.cache/perfgate}"
out=bench/out
mkdir -p "$out"
corpus="$out/tiktoken_corpus.json"
PERFGATE_TIKTOKEN_CORPUS="$PWD/$corpus" GOMAXPROCS=1 \
  go test ./tokenizer -run '^$' -bench 'BenchmarkBuiltinEncode' -benchtime "${BENCHTIME:-3x}" | tee "$out/tiktoken_go.txt"
NODE_PATH="$cache/npm/node_modules" node bench/tokenizer/tiktoken_bench.js "$corpus" | tee "$out/tiktoken_node.txt"
echo "encoding     perfgate tokens/s   tiktoken tokens/s   ratio"
while read -r name peer; do
  ours=$(awk -v n="BenchmarkBuiltinEncode/$name" '$1 ~ "^"n"(-[0-9]+)?$" { for (i = 1; i <= NF; i++) if ($(i+1) == "tokens/s") print $i }' "$out/tiktoken_go.txt")
  awk -v n="$name" -v a="$ours" -v b="$peer" 'BEGIN { printf "%-12s %17.0f %19.0f %7.2fx\n", n, a, b, a / b }'
done < "$out/tiktoken_node.txt"
