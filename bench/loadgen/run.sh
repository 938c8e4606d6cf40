#!/usr/bin/env bash
# bench/loadgen/run.sh — perfgate's load generator against peers, in one run on one
# machine, printing ratios (a ratio from the same run is meaningful on a shared box;
# absolute numbers are not).
#
#   1. non-streaming req/s against one trivial local server (200-byte JSON): wrk, a bare
#      fasthttp client loop, evbare (a minimal Go epoll event loop: what a Go event loop
#      saves over the fasthttp loop), vegeta (library, capped workers; built in a
#      temporary module so perfgate never depends on it) and perfgate loadgen with
#      recording on (a fixed payload as wrk sends, and synthetic prompts; and the fixed
#      payload with its event loops off, -transport goroutines, the goroutine way).
#      Rounds are interleaved and the median of each is reported.
#   2. timing accuracy as load rises (go test -bench TimingAccuracy).
#   3. concurrent SSE streams at 1 token/s (memory per stream, ITL error against the
#      server's own emission log, CPU per token). LG_STREAMS=18000 for the full scale run
#      (needs `ulimit -n` >= 20000 in both processes).
#   4. (opt-in: LG_PORTS_RUN=1, or 4 in LG_PHASES) past the ephemeral ports of one source
#      address: two loadgen processes of LG_PORTS_STREAMS (15000) slow SSE streams each
#      (a process may hold 20,000 open files here) against one address:port served by
#      two server processes sharing it (SO_REUSEPORT); first from one source address
#      (127.0.0.5), then from four (SourceAddrs 127.0.0.1-4). Prints connected / ok /
#      errors per case and the peak of established connections seen by `ss`.
#
# Knobs: LG_DURATION (3s), LG_CONC (64), LG_ROUNDS (3), LG_STREAMS (2000), LG_PORT (18080),
# LG_PHASES (phases to run, default "123"), LG_PORTS_RUN (0), LG_PORTS_STREAMS (15000 per
# process), LG_PORTS_ITL (3s), LG_PORTS_TOKENS (10), LG_PORTS_RAMP (8s), LG_PORTS_CASES
# ("1:5 4:1": N:F = N source addresses from 127.0.0.F).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
OUT=bench/out/loadgen.txt
: > "$OUT"
D=${LG_DURATION:-3s}; C=${LG_CONC:-64}; ROUNDS=${LG_ROUNDS:-3}; STREAMS=${LG_STREAMS:-2000}
PORT=${LG_PORT:-18080}; SPORT=$((PORT + 1)); PHASES=${LG_PHASES:-123}
phase() { [[ "$PHASES" == *"$1"* ]]; }
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

go build -o "$TMP/lgbench" ./bench/loadgen
VEGETA=""
if mkdir -p "$TMP/vegeta" && cp bench/loadgen/vegeta_peer.go.txt "$TMP/vegeta/main.go" &&
   (cd "$TMP/vegeta" && go mod init vegetapeer >/dev/null 2>&1 &&
    GOFLAGS=-mod=mod go get github.com/tsenart/vegeta/v12@v12.13.0 >/dev/null 2>&1 &&
    go build -o vegeta-peer . >/dev/null 2>&1); then
  VEGETA="$TMP/vegeta/vegeta-peer"
else
  echo "loadgen bench: vegeta not fetchable; skipping that peer" >&2
fi
WRK=$(command -v wrk || true)
[ -z "$WRK" ] && echo "loadgen bench: wrk not installed (apt-get install -y wrk); skipping that peer" >&2

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$TMP/lgbench" server -addr "127.0.0.1:$PORT" 2>/dev/null & PIDS+=($!)
sleep 0.5
URL="http://127.0.0.1:$PORT"
cat > "$TMP/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = '{"model":"m","messages":[{"role":"user","content":"hello"}]}'
wrk.headers["Content-Type"] = "application/json"
LUA

if phase 1; then
declare -A R
add() { R[$1]="${R[$1]:-} $2"; }
for round in $(seq "$ROUNDS"); do
  if [ -n "$WRK" ]; then
    add wrk "$("$WRK" -t2 -c"$C" -d"$D" -s "$TMP/post.lua" "$URL/v1/chat/completions" | awk '/Requests\/sec/ {print int($2)}')"
  fi
  add bare "$("$TMP/lgbench" bare -url "$URL/v1/chat/completions" -c "$C" -d "$D" | awk '{print $2}')"
  add evbare "$("$TMP/lgbench" evbare -url "$URL/v1/chat/completions" -c "$C" -d "$D" | awk '{print $2}')"
  [ -n "$VEGETA" ] && add vegeta "$("$VEGETA" -url "$URL/v1/chat/completions" -c "$C" -d "$D" | awk '{print $2}')"
  add loadgen "$("$TMP/lgbench" loadgen -payloads -url "$URL" -c "$C" -d "$D" -record "$TMP/rec.jsonl" | awk '{print $2}')"
  add loadgen_synthetic "$("$TMP/lgbench" loadgen -url "$URL" -c "$C" -d "$D" -record "$TMP/rec.jsonl" | awk '{print $2}')"
  add loadgen_goroutines "$("$TMP/lgbench" loadgen -transport goroutines -payloads -url "$URL" -c "$C" -d "$D" -record "$TMP/rec.jsonl" | awk '{print $2}')"
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
{
  echo "== non-streaming req/s, concurrency $C, $ROUNDS rounds of $D (median; all rounds in brackets)"
  for k in wrk bare evbare vegeta loadgen loadgen_synthetic loadgen_goroutines; do
    [ -n "${R[$k]:-}" ] || continue
    printf "%-18s %8s   [%s ]\n" "$k" "$(echo "${R[$k]}" | median)" "${R[$k]}"
  done
  lg=$(echo "${R[loadgen]}" | median)
  # Synthetic prompts against the fixed payload (same run, same server).
  per=$(awk -v a="${R[loadgen_synthetic]}" -v b="${R[loadgen]}" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= n; i++) printf "%.2f ", (y[i] ? x[i] / y[i] : 0) }')
  printf "ratio synthetic/loadgen %.2f   (per round: %s; median %s)\n" \
    "$(awk -v a="$(echo "${R[loadgen_synthetic]}" | median)" -v b="$lg" 'BEGIN {print (b ? a/b : 0)}')" "$per" "$(echo "$per" | median)"
  ratio() { # ratio NUM DEN: of the medians, then per round and their median
    local per
    per=$(awk -v a="${R[$1]}" -v b="${R[$2]}" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
      for (i = 1; i <= n; i++) printf "%.2f ", (y[i] ? x[i] / y[i] : 0) }')
    printf "ratio %s/%-8s %.2f   (per round: %s; median %s)\n" "$1" "$2" \
      "$(awk -v a="$(echo "${R[$1]}" | median)" -v b="$(echo "${R[$2]}" | median)" 'BEGIN {print (b ? a/b : 0)}')" "$per" "$(echo "$per" | median)"
  }
  # What an event loop saves (the peer), and what loadgen's event loops save over its
  # goroutine way (same recording, same payload).
  [ -n "${R[evbare]:-}" ] && ratio evbare bare
  [ -n "${R[loadgen_goroutines]:-}" ] && ratio loadgen loadgen_goroutines
  for k in wrk bare evbare vegeta; do
    [ -n "${R[$k]:-}" ] || continue
    # The ratio of the medians, and (the rounds being interleaved) the median of the
    # ratios within each round, which a slow or fast spell of the machine moves less.
    per=$(awk -v a="${R[loadgen]}" -v b="${R[$k]}" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
      for (i = 1; i <= n; i++) printf "%.2f ", (y[i] ? x[i] / y[i] : 0) }')
    printf "ratio loadgen/%-8s %.2f   (per round: %s; median %s)\n" "$k" \
      "$(awk -v a="$lg" -v b="$(echo "${R[$k]}" | median)" 'BEGIN {print (b ? a/b : 0)}')" "$per" "$(echo "$per" | median)"
  done
} | tee -a "$OUT"
fi

if phase 2; then
echo "== timing accuracy vs load (client − server emission, |error|)" | tee -a "$OUT"
go test -run '^$' -bench TimingAccuracy -benchtime 1x ./loadgen 2>&1 | grep -E 'Benchmark' | tee -a "$OUT"
fi

if phase 3; then
echo "== $STREAMS concurrent SSE streams at 1 token/s (4 source addresses)" | tee -a "$OUT"
"$TMP/lgbench" server -addr "127.0.0.1:$SPORT" -stream -itl 1s -tokens "${LG_STREAM_TOKENS:-10}" 2>/dev/null & PIDS+=($!)
sleep 0.5
"$TMP/lgbench" streams -url "http://127.0.0.1:$SPORT" -n "$STREAMS" -sources 4 -ramp "${LG_RAMP:-5s}" | tee -a "$OUT"
fi

if phase 4 || [ "${LG_PORTS_RUN:-0}" = 1 ]; then
PPORT=$((PORT + 2)); PN=${LG_PORTS_STREAMS:-15000}; PITL=${LG_PORTS_ITL:-3s}; PTOK=${LG_PORTS_TOKENS:-10}
PRAMP=${LG_PORTS_RAMP:-8s}
read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range
{
  echo "== past the port limit: 2 loadgen processes x $PN SSE streams ($PTOK tokens, one per $PITL, opened over $PRAMP)"
  echo "   to one address 127.0.0.1:$PPORT served by 2 processes (SO_REUSEPORT); ephemeral ports $lo-$hi ($((hi - lo + 1)) per source address); open files per process $(ulimit -n)"
} | tee -a "$OUT"
for _ in 1 2; do
  "$TMP/lgbench" server -addr "127.0.0.1:$PPORT" -reuseport -stream -itl "$PITL" -tokens "$PTOK" 2>/dev/null & PIDS+=($!)
done
sleep 0.5
established() { ss -Htn state established "( dport = :$PPORT )" 2>/dev/null | wc -l; }
timewait() { ss -Htn state time-wait "( dport = :$PPORT or sport = :$PPORT )" 2>/dev/null | wc -l; }
# TIME_WAIT sockets of an earlier run still hold their ports (60 s on Linux). The two
# cases use disjoint source addresses, so one cannot take ports from the other.
for _ in $(seq 90); do [ "$(timewait)" -eq 0 ] && break; sleep 1; done
for S in ${LG_PORTS_CASES:-1:5 4:1}; do
  n=${S%%:*}; from=${S#*:}
  "$TMP/lgbench" streams -url "http://127.0.0.1:$PPORT" -n "$PN" -sources "$n" -source-from "$from" -ramp "$PRAMP" -emits=false > "$TMP/ports1.txt" 2> "$TMP/ports1.err" & A=$!
  "$TMP/lgbench" streams -url "http://127.0.0.1:$PPORT" -n "$PN" -sources "$n" -source-from "$from" -ramp "$PRAMP" -emits=false > "$TMP/ports2.txt" 2> "$TMP/ports2.err" & B=$!
  peak=0
  while kill -0 "$A" 2>/dev/null || kill -0 "$B" 2>/dev/null; do
    c=$(established); [ "$c" -gt "$peak" ] && peak=$c; sleep 1
  done
  wait "$A" "$B" || true
  printf "%-32s " "$n source address(es) from 127.0.0.$from:" | tee -a "$OUT"
  cat "$TMP/ports1.txt" "$TMP/ports2.txt" | awk -v peak="$peak" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "n") n += kv[2]; if (kv[1] == "connected") c += kv[2]; if (kv[1] == "ok") o += kv[2]; if (kv[1] == "last_connected_s" && kv[2] > last) last = kv[2] }
      if (match($0, /errors=map\[[^]]*\]/)) { m = split(substr($0, RSTART + 11, RLENGTH - 12), ps, " "); for (j = 1; j <= m; j++) { split(ps[j], q, ":"); E[q[1]] += q[2] } } }
    END { e = ""; for (k in E) e = e k ":" E[k] " "; printf "streams=%d connected=%d ok=%d errors=[%s] peak_established=%d last_connected_s=%s\n", n, c, o, e, peak, last }' | tee -a "$OUT"
  sed 's/^/    /' "$TMP/ports1.txt" "$TMP/ports2.txt" "$TMP/ports1.err" "$TMP/ports2.err" >> "$OUT"
done
fi
