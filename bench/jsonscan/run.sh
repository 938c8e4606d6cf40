#!/usr/bin/env bash
# bench/jsonscan/run.sh — the JSON readers' speed before and after they shared one
# scanning leaf (internal/jsonscan), measured in the same run: the streamed-chunk parser
# (internal/openai), the client-record decoder (record), the mock's request parser
# (mockserver) and the tokenizer.json loader (tokenizer). It builds each package's test
# binary at BASE (default: the commit before internal/jsonscan existed) and at the work
# tree's HEAD, runs them alternately ROUNDS times (default 5), and prints each
# benchmark's median ns/op on both sides and their ratio against the target of at most
# 3% slower.
#
#   setsid --wait sh -c 'echo -15 >/proc/self/autogroup; exec bash bench/jsonscan/run.sh'
#
# Writes bench/out/jsonscan.txt. The tokenizer benchmark needs `make fixtures`.
set -euo pipefail
cd "$(dirname "$0")/../.."
base="${JSONSCAN_BASE:-dce5c40^}"
rounds="${ROUNDS:-5}"
benchtime="${BENCHTIME:-1s}"
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$base" >/dev/null 2>&1
# package | benchmarks
specs=(
  "internal/openai|^(BenchmarkChunkParser|BenchmarkChunkParserWhole)$"
  "record|^BenchmarkDecodeClient$"
  "mockserver|^(BenchmarkParseChat|BenchmarkWholeChat)$"
  "tokenizer|^BenchmarkHFLoadLlama31$"
)
for side in base head; do
  src=.
  [ "$side" = base ] && src="$work/base"
  for s in "${specs[@]}"; do
    pkg="${s%%|*}"
    (cd "$src" && go test -c -o "$work/$side-${pkg//\//_}.test" "./$pkg")
  done
done
raw="$work/raw.txt"
: >"$raw"
for r in $(seq 1 "$rounds"); do
  order="base head"
  [ $((r % 2)) = 0 ] && order="head base"
  for s in "${specs[@]}"; do
    pkg="${s%%|*}" re="${s#*|}"
    for side in $order; do
      dir=.
      [ "$side" = base ] && dir="$work/base"
      (cd "$dir/$pkg" && "$work/$side-${pkg//\//_}.test" -test.run '^$' -test.bench "$re" \
        -test.benchtime "$benchtime" -test.benchmem) |
        awk -v side="$side" -v pkg="$pkg" '/^Benchmark/ {sub(/-[0-9]+$/, "", $1); print side, pkg "." $1, $3}' >>"$raw"
    done
  done
done
{
  echo "# JSON readers before (${base}: $(git rev-parse --short "$base")) and after (HEAD: $(git rev-parse --short HEAD)) the shared scanning leaf"
  echo "# $rounds alternating rounds of -benchtime $benchtime; medians of ns/op; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo
  echo "| benchmark | before ns/op | after ns/op | after/before | target ≤ 1.03 |"
  echo "|---|---|---|---|---|"
  awk '
    { v[$2 "|" $1] = v[$2 "|" $1] " " $3; names[$2] = 1 }
    function median(s,   a, n, i, j, t) {
      n = split(s, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      for (n in names) {
        b = median(v[n "|base"]); h = median(v[n "|head"]); q = h / b
        printf "| %s | %.0f | %.0f | %.3f | %s |\n", n, b, h, q, (q <= 1.03 ? "met" : "NOT met")
      }
    }' "$raw" | sort
} | tee bench/out/jsonscan.txt
