#!/usr/bin/env bash
# Peer benchmark for package distribution: the Go benchmarks against SciPy/numpy
# (Debian's python3-scipy and python3-numpy), measured in the same run. Prints ratios
# (peer time / Go time; > 1 means Go is faster).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
if ! $py -c 'import numpy, scipy' 2>/dev/null; then
  echo "bench/distribution: python3-numpy/python3-scipy missing; skipping peer run" >&2
  exit 0
fi
# KS on 1e6 samples runs a few times; the per-draw benchmarks need many iterations.
go_out=$(go test -run '^$' -bench 'KS1_1M' -benchtime "${BENCHTIME:-3x}" ./distribution/ 2>/dev/null
         go test -run '^$' -bench 'Integers32|RandomStateGamma' -benchtime 1000000x ./distribution/nprand/ 2>/dev/null)
echo "$go_out" | grep ^Benchmark
peer=$($py bench/distribution/peer.py)
echo "$peer"
gons() { echo "$go_out" | awk -v n="Benchmark$1" '$1 ~ "^"n"(-[0-9]+)?$" {print $3}'; }
peerns() { echo "$peer" | awk -v n="$1" '$1 == n {print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "n/a" }'; }
printf '%-44s %14s %14s %8s\n' "benchmark" "Go ns/op" "peer ns/op" "peer/Go"
for pair in "KS1_1M KS1_1M" "Integers32 Integers32_scalar" "Integers32 Integers32_vector" \
            "RandomStateGamma RandomStateGamma_scalar" "RandomStateGamma RandomStateGamma_vector"; do
  set -- $pair
  g=$(gons "$1"); p=$(peerns "$2")
  printf '%-44s %14s %14.1f %8s\n' "$1 vs numpy/scipy $2" "$g" "$p" "$(ratio "$p" "$g")"
done
