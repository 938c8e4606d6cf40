#!/usr/bin/env bash
# bench/loadgen/ab.sh — the load generator at BASE against the work tree's HEAD, in one
# run against one server: each round runs both builds back to back (the order
# alternating) in each of phase 1's loadgen modes (the fixed payload, synthetic prompts,
# the goroutine transport), and the script prints each mode's median req/s on both sides
# and HEAD/BASE, of the medians and per round. Comparing the builds directly, round by
# round, separates a change of a few percent from the machine's drift, which moves
# phase 1's ratios against its peers by ±10% between rounds.
#
#   flock /work/bench.lock setsid --wait sh -c 'echo -15 >/proc/self/autogroup; exec bash bench/loadgen/ab.sh'
#
# Knobs: AB_BASE (8a280c8, the commit before loadgen's transports moved behind one
# interface), AB_ROUNDS (10), LG_DURATION (3s), LG_CONC (64), LG_PORT (18090).
# Writes bench/out/loadgen-ab.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
OUT=bench/out/loadgen-ab.txt
BASE=${AB_BASE:-8a280c8}; ROUNDS=${AB_ROUNDS:-10}
D=${LG_DURATION:-3s}; C=${LG_CONC:-64}; PORT=${LG_PORT:-18090}
TMP=$(mktemp -d)
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
  git worktree remove --force "$TMP/base" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
git worktree add --detach "$TMP/base" "$BASE" >/dev/null 2>&1
(cd "$TMP/base" && go build -o "$TMP/lg-base" ./bench/loadgen)
go build -o "$TMP/lg-head" ./bench/loadgen
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$TMP/lg-head" server -addr "127.0.0.1:$PORT" 2>/dev/null &
SERVER=$!
sleep 0.5
URL="http://127.0.0.1:$PORT"
modes=(fixed synthetic goroutines)
args() {
  case $1 in
  fixed) echo "-payloads" ;;
  synthetic) echo "" ;;
  goroutines) echo "-transport goroutines -payloads" ;;
  esac
}
raw="$TMP/raw.txt"
: >"$raw"
for r in $(seq "$ROUNDS"); do
  order="base head"
  [ $((r % 2)) = 0 ] && order="head base"
  for m in "${modes[@]}"; do
    for side in $order; do
      # shellcheck disable=SC2046 # the mode's flags are words
      n=$("$TMP/lg-$side" loadgen $(args "$m") -url "$URL" -c "$C" -d "$D" -record "$TMP/rec.jsonl" | awk '{print $2}')
      echo "$r $m $side $n" >>"$raw"
    done
  done
done
{
  echo "# loadgen at BASE ($BASE: $(git rev-parse --short "$BASE")) and HEAD ($(git rev-parse --short HEAD)), one server"
  echo "# $ROUNDS alternating rounds of $D at concurrency $C; req/s; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo
  echo "| mode | BASE median | HEAD median | HEAD/BASE of medians | median of per-round HEAD/BASE | per round |"
  echo "|---|---|---|---|---|---|"
  awk '
    { v[$2, $3] = v[$2, $3] " " $4; rr[$2, $1, $3] = $4; if (!($2 in seen)) { seen[$2] = 1; order[++nm] = $2 }; if ($1 > nr) nr = $1 }
    function median(s,   a, n, i, j, t) {
      n = split(s, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
    }
    END {
      for (k = 1; k <= nm; k++) {
        m = order[k]; per = ""
        for (r = 1; r <= nr; r++) if (rr[m, r, "base"] > 0) per = per sprintf(" %.3f", rr[m, r, "head"] / rr[m, r, "base"])
        b = median(v[m, "base"]); h = median(v[m, "head"])
        printf "| %s | %d | %d | %.3f | %.3f |%s |\n", m, b, h, (b ? h / b : 0), median(per), per
      }
    }' "$raw"
} | tee "$OUT"
