#!/usr/bin/env bash
# Benchmarks the mock server against the minimal fasthttp SSE loop (StartRef), both
# driven by the same client in the same run, and prints the ratios. MOCKBENCH_SECONDS
# sets each phase's length (default 2; use 5+ on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
go test -run '^$' -bench "${BENCH:-.}" -benchtime 1x ./bench/mock | tee bench/out/mock.txt
echo
echo "== mock vs reference (ratio = mock / minimal fasthttp SSE loop, same client, same run)"
awk '/^Benchmark/ {
  name=$1; line="";
  for (i=5; i<NF; i+=2) line=line sprintf("  %s=%s", $(i+1), $i);
  printf "%-40s%s\n", name, line }' bench/out/mock.txt
