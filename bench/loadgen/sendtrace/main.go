// Command sendtrace splits the lateness of an open-loop run's sends by what the send
// loop's thread was doing meanwhile. It reads that from the kernel's scheduler and
// timer events. bench/loadgen/sendtrace.sh records the run (BenchmarkOpenLoopCost with
// PERFGATE_SENDTRACE) and runs it:
//
//	go run ./bench/loadgen/sendtrace [-late 100us] DIR
//
// DIR holds trace.txt (tracefs text, monotonic clock, tgids recorded; events
// timer:hrtimer_start, hrtimer_cancel, hrtimer_expire_entry, sched:sched_wakeup,
// sched_switch), pid and stub (the process ids of the client and of the stub server it
// sends to) and requests.txt (a request per line: its due time on the monotonic clock
// and Sent − Scheduled, ns).
//
// The send loop's thread is the client's thread with the most sleeps at 1 ns timer
// slack (lockPreciseThread sets it; sysmon and Go's other threads keep the default).
// While any request was overdue by more than -late at the client, the thread was in
// one of these states, and the time is split among them:
//
//   - running: on a CPU (spinning to a due time, writing, or passing other requests);
//   - asleep: in nanosleep toward another request, its timer not yet expired;
//   - timer late: its timer expired, the kernel's timer interrupt not yet run;
//   - waiting for a CPU: woken or preempted, runnable, another task on the CPU; split by
//     that task's process (the one that ran on the CPU just before the thread got it, or
//     that preempted it);
//   - parked: blocked without a timer (the Go runtime's futex: a channel, a Go timer, a
//     hand-off of its processor).
//
// It also prints, over all the thread's sleeps, how long after its expiry the timer
// fired and how long a woken thread waited for a CPU.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
)

// event is one trace line.
type event struct {
	t          int64 // ns, monotonic
	pid, tgid  int
	cpu        int
	comm, name string
	fields     map[string]string
}

var lineRE = regexp.MustCompile(`^\s*(.+)-(\d+)\s+\(\s*([\d-]+)\)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): (\w+): (.*)$`)

func parse(path string) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		m := lineRE.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not a tracefs line with a tgid (options/record-tgid): %q", path, line, s)
		}
		sec, _ := strconv.ParseInt(m[5], 10, 64)
		frac := (m[6] + "000000000")[:9]
		ns, _ := strconv.ParseInt(frac, 10, 64)
		pid, _ := strconv.Atoi(m[2])
		tgid, _ := strconv.Atoi(m[3]) // "-------": unknown, 0
		cpu, _ := strconv.Atoi(m[4])
		e := event{t: sec*1e9 + ns, pid: pid, tgid: tgid, cpu: cpu, comm: m[1], name: m[7], fields: map[string]string{}}
		for _, kv := range strings.Fields(m[8]) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				e.fields[k] = v
			}
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

func (e *event) int(k string) int64 {
	n, _ := strconv.ParseInt(e.fields[k], 10, 64)
	return n
}

// span is a stretch of the loop thread's time in one state; by is the task it waited
// behind (waiting for a CPU only).
type span struct {
	from, to int64
	state    string
	by       string
}

const (
	running  = "running"
	asleep   = "asleep"
	timerLag = "timer late"
	waiting  = "waiting for a CPU"
	parked   = "parked"
)

// timeline builds the loop thread's spans, and the timer and wake-up delays of its
// sleeps.
func timeline(evs []event, loop, client, stub int, tgidOf map[int]int, names map[int]string) (spans []span, timerLate, wakeRun []float64) {
	who := func(pid int) string {
		switch tg := tgidOf[pid]; {
		case pid == 0:
			return "idle"
		case tg == client:
			return "the client's other threads"
		case tg == stub:
			return fmt.Sprintf("the stub server (process %d)", tg)
		default:
			return fmt.Sprintf("process %d (%s)", tg, names[tg])
		}
	}
	var (
		state            = running
		since     int64  = -1
		timer     string // the pending sleep's hrtimer
		expires   int64
		woke      int64 = -1
		preemptBy string
	)
	cur := map[int]int{} // the task each CPU last switched to
	add := func(to int64, st, by string) {
		if since >= 0 && to > since {
			spans = append(spans, span{since, to, st, by})
		}
		since = to
	}
	// ran ends a wait for a CPU at t, behind the task that had the CPU (prev).
	ran := func(t int64, prev int) {
		by := preemptBy
		if by == "" {
			by = who(prev)
		}
		add(t, waiting, by)
		if woke >= 0 {
			wakeRun = append(wakeRun, float64(t-woke)/1e3)
		}
		state, woke, preemptBy = running, -1, ""
	}
	for i := range evs {
		e := &evs[i]
		if e.pid == loop && state == waiting {
			// The thread runs: its switch in was not traced (the kernel leaves some
			// switches from the idle task out), so it ran by now at the latest.
			ran(e.t, cur[e.cpu])
		}
		switch e.name {
		case "hrtimer_start":
			if e.pid == loop && e.fields["function"] == "hrtimer_wakeup" {
				timer, expires = e.fields["hrtimer"], e.int("expires")
			}
		case "hrtimer_cancel":
			if e.pid == loop && e.fields["hrtimer"] == timer {
				timer = ""
			}
		case "hrtimer_expire_entry":
			if timer != "" && e.fields["hrtimer"] == timer {
				now := e.int("now")
				if state == asleep && now > expires && expires > since {
					add(expires, asleep, "")
					state = timerLag
				}
				timerLate = append(timerLate, float64(now-expires)/1e3)
				timer = ""
			}
		case "sched_wakeup":
			if e.int("pid") == int64(loop) && (state == asleep || state == timerLag || state == parked) {
				add(e.t, state, "")
				state, woke = waiting, e.t
			}
		case "sched_switch":
			prev, next := int(e.int("prev_pid")), int(e.int("next_pid"))
			cur[e.cpu] = next
			switch {
			case prev == loop:
				add(e.t, state, "")
				switch {
				case strings.HasPrefix(e.fields["prev_state"], "R"):
					state, preemptBy = waiting, who(next)
				case timer != "":
					state = asleep
				default:
					state = parked
				}
			case next == loop && state == waiting:
				ran(e.t, prev)
			}
		}
	}
	return spans, timerLate, wakeRun
}

func main() {
	late := flag.Duration("late", 100*time.Microsecond, "a request is overdue while it is this much later than its due time at the client")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: sendtrace [-late D] DIR (see bench/loadgen/sendtrace.sh)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *late, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sendtrace:", err)
		os.Exit(1)
	}
}

// run reads the run in dir and writes the split to w.
func run(dir string, late time.Duration, w io.Writer) error {
	client, err := readPid(filepath.Join(dir, "pid"))
	if err != nil {
		return err
	}
	stub, err := readPid(filepath.Join(dir, "stub"))
	if err != nil {
		return err
	}
	evs, err := parse(filepath.Join(dir, "trace.txt"))
	if err != nil {
		return err
	}
	tgidOf := map[int]int{} // thread id: process id
	names := map[int]string{}
	precise := map[int]int{}
	for _, e := range evs {
		if e.tgid > 0 {
			tgidOf[e.pid] = e.tgid
			if e.pid == e.tgid || names[e.tgid] == "" {
				names[e.tgid] = e.comm
			}
		}
		if e.name == "hrtimer_start" && e.tgid == client && e.fields["function"] == "hrtimer_wakeup" &&
			e.int("expires")-e.int("softexpires") <= 1 {
			precise[e.pid]++
		}
	}
	loop, most := 0, 0
	for pid, n := range precise {
		if n > most {
			loop, most = pid, n
		}
	}
	if loop == 0 {
		return fmt.Errorf("%s: no thread of process %d slept at 1 ns timer slack: not an open-loop run, or the timer events were off", filepath.Join(dir, "trace.txt"), client)
	}
	spans, timerLate, wakeRun := timeline(evs, loop, client, stub, tgidOf, names)
	reqs, err := readRequests(filepath.Join(dir, "requests.txt"))
	if err != nil {
		return err
	}
	first, last := evs[0].t, evs[len(evs)-1].t
	var windows [][2]int64
	var lags []float64
	for _, r := range reqs {
		if r.due < first || r.due+r.lag > last {
			continue // outside the trace
		}
		lags = append(lags, float64(r.lag)/1e3)
		if r.lag > int64(late) {
			windows = append(windows, [2]int64{r.due, r.due + r.lag})
		}
	}
	union := merge(windows)
	var overdue int64
	for _, w := range union {
		overdue += w[1] - w[0]
	}
	fmt.Fprintf(w, "send loop thread %d of process %d: %d sleeps at 1 ns slack, %d requests in the trace\n", loop, client, most, len(lags))
	fmt.Fprintf(w, "  late at the client (Sent - Scheduled), µs: %s\n", summary(lags))
	fmt.Fprintf(w, "  its timer fired after the expiry asked for, µs: %s\n", summary(timerLate))
	fmt.Fprintf(w, "  woken or preempted, it waited for a CPU, µs: %s\n", summary(wakeRun))
	fmt.Fprintf(w, "%d requests more than %v late; at least one was overdue for %.1f ms in all, while the thread was:\n", len(windows), late, float64(overdue)/1e6)
	by := map[string]int64{}
	behind := map[string]int64{}
	for _, s := range spans {
		for _, w := range union {
			o := min(s.to, w[1]) - max(s.from, w[0])
			if o <= 0 {
				continue
			}
			by[s.state] += o
			if s.state == waiting {
				behind[s.by] += o
			}
		}
	}
	for _, st := range []string{running, asleep, timerLag, waiting, parked} {
		fmt.Fprintf(w, "  %-18s %8.1f ms  %5.1f%%\n", st, float64(by[st])/1e6, pct(by[st], overdue))
		if st == waiting {
			keys := make([]string, 0, len(behind))
			for k := range behind {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b string) int { return int(behind[b] - behind[a]) })
			for _, k := range keys {
				fmt.Fprintf(w, "    behind %-36s %8.1f ms  %5.1f%%\n", k, float64(behind[k])/1e6, pct(behind[k], overdue))
			}
		}
	}
	return nil
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s:1: want a process id, got %q", path, strings.TrimSpace(string(b)))
	}
	return n, nil
}

type request struct{ due, lag int64 }

func readRequests(path string) ([]request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []request
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var r request
		f := strings.Fields(sc.Text())
		var err1, err2 error
		if len(f) == 2 {
			r.due, err1 = strconv.ParseInt(f[0], 10, 64)
			r.lag, err2 = strconv.ParseInt(f[1], 10, 64)
		}
		if len(f) != 2 || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: want \"due_ns sent_lag_ns\", got %q", path, n, sc.Text())
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// merge returns the union of the windows, sorted and disjoint.
func merge(ws [][2]int64) [][2]int64 {
	slices.SortFunc(ws, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	var out [][2]int64
	for _, w := range ws {
		if n := len(out); n > 0 && w[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// summary is "n N, mean, p50, p90, p99, max".
func summary(xs []float64) string {
	if len(xs) == 0 {
		return "none"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(p float64) float64 { return distribution.PercentileSorted(s, p) }
	var sum float64
	for _, x := range s {
		sum += x
	}
	return fmt.Sprintf("n %d, mean %.1f, p50 %.1f, p90 %.1f, p99 %.1f, max %.1f", len(s), sum/float64(len(s)), q(0.5), q(0.9), q(0.99), s[len(s)-1])
}
