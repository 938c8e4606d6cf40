#!/usr/bin/env bash
# Runs perfgate's benchmarks: the Go benchmarks of every package, then each peer script
# under bench/*/run.sh, which measure a peer (HF tokenizers, tiktoken, a minimal fasthttp
# SSE loop, wrk, …) in the same run and print ratios. Set BENCHTIME to lengthen runs.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
echo "== go test -bench (benchtime ${BENCHTIME:-1x..})"
go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-2x}" -benchmem ./... | tee bench/out/go-bench.txt
for s in bench/*/run.sh; do
  [ -f "$s" ] || continue
  echo "== $s"
  bash "$s" || echo "bench: $s failed (exit $?)" >&2
done
