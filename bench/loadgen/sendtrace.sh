#!/usr/bin/env bash
# bench/loadgen/sendtrace.sh — where an open-loop run's late sends spent their lateness,
# from the kernel's own scheduler and timer events (Linux tracefs; needs root).
#
# It sets up the trace events, runs BenchmarkOpenLoopCost/rate=$RATE once with
# PERFGATE_SENDTRACE (the benchmark turns tracing on for its open-loop run only and
# writes the trace, its process id and each request's due time and lateness), puts
# tracing back as it found it (events off, buffer size, clock, tgid option), and runs
# bench/loadgen/sendtrace on the result: the send loop thread's state while requests
# were overdue (running, asleep, timer late, waiting for a CPU and behind which process,
# parked in the Go runtime), and how late its timers fired and its wake-ups ran.
#
#   sudo bash bench/loadgen/sendtrace.sh            # RATE=5000, LATE=100us, OUT=bench/out/sendtrace
#
# Tracing costs the traced run some accuracy (each event is a few hundred ns): compare the
# shares, not the absolute lateness, with untraced runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${RATE:-5000}; LATE=${LATE:-100us}; OUT=${OUT:-bench/out/sendtrace}
T=/sys/kernel/tracing
if [ "$(id -u)" != 0 ]; then
  echo "sendtrace.sh: needs root (it writes $T)" >&2; exit 2
fi
if [ ! -e "$T/trace" ]; then
  mount -t tracefs nodev "$T" || { echo "sendtrace.sh: no tracefs at $T" >&2; exit 2; }
fi
EVENTS="timer:hrtimer_start timer:hrtimer_cancel timer:hrtimer_expire_entry sched:sched_wakeup sched:sched_switch"
saved_clock=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$T/trace_clock")
saved_size=$(sed "s/ .*//" "$T/buffer_size_kb")
saved_tgid=$(cat "$T/options/record-tgid")
restore() {
  echo 0 > "$T/tracing_on"
  : > "$T/set_event"
  echo "$saved_clock" > "$T/trace_clock"
  echo "$saved_size" > "$T/buffer_size_kb"
  echo "$saved_tgid" > "$T/options/record-tgid"
  : > "$T/trace"
}
trap restore EXIT
echo 0 > "$T/tracing_on"
echo mono > "$T/trace_clock"        # the clock the benchmark's due times are written in
echo 1 > "$T/options/record-tgid"   # thread -> process
echo 131072 > "$T/buffer_size_kb"   # per CPU: a 5,000 req/s second is ~100k events
: > "$T/set_event"
for e in $EVENTS; do echo "$e" >> "$T/set_event"; done
rm -rf "$OUT"; mkdir -p "$OUT"
go test -c -o "$OUT/loadgen.test" ./loadgen
(cd "$OUT" && PERFGATE_SENDTRACE="$PWD" ./loadgen.test -test.run '^$' \
  -test.bench "OpenLoopCost/rate=$RATE\$" -test.benchtime 1x) | tee "$OUT/bench.txt"
go run ./bench/loadgen/sendtrace -late "$LATE" "$OUT" | tee "$OUT/report.txt"
