package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A made-up run: client process 100, its send loop thread 101 (1 ns slack) and another
// thread 102; the stub is process 200 (thread 201). Times are µs after 1,000 s.
const base = 1000 * int64(time.Second) // the trace's first second, ns

func line(us int64, comm string, pid, tgid, cpu int, event, fields string) string {
	t := base + us*1000
	tg := fmt.Sprintf("%5d", tgid)
	if tgid == 0 {
		tg = "-------"
	}
	return fmt.Sprintf("%16s-%-7d (%s) [%03d] d..2. %d.%06d: %s: %s", comm, pid, tg, cpu, t/1e9, t%1e9/1e3, event, fields)
}

func sleepLine(us int64, pid, tgid int, timer string, expiresUS, slack int64) string {
	e := base + expiresUS*1000
	return line(us, "loadgen.test", pid, tgid, 0, "hrtimer_start",
		fmt.Sprintf("hrtimer=%s function=hrtimer_wakeup expires=%d softexpires=%d mode=REL was_armed=0", timer, e, e-slack))
}

func writeRun(t *testing.T, trace []string, requests string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"trace.txt":    "# tracer: nop\n#\n" + strings.Join(trace, "\n") + "\n",
		"pid":          "100\n",
		"stub":         "200\n",
		"requests.txt": requests,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The loop sleeps toward a request due at 100 µs; its timer fires at 130 (30 late) and
// wakes it at 131; it waits behind the stub until 400 and sends at 410. The request is
// 310 µs late: of its overdue time 100–410, 31 µs the timer was late (until the wake-up
// at 131), 269 µs it waited behind the stub, 10 µs it ran.
func TestSplitOfAnOverdueRequest(t *testing.T) {
	trace := []string{
		line(0, "loadgen.test", 101, 100, 0, "sched_switch", "prev_comm=loadgen.test prev_pid=101 prev_prio=120 prev_state=R ==> next_comm=loadgen.test next_pid=101 next_prio=120"),
		sleepLine(10, 101, 100, "aa", 100, 1),
		sleepLine(11, 102, 100, "bb", 90, 50_000), // another thread at the default slack
		line(12, "loadgen.test", 101, 100, 0, "sched_switch", "prev_comm=loadgen.test prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=loadgen.test next_pid=201 next_prio=120"),
		line(130, "loadgen.test", 201, 200, 0, "hrtimer_expire_entry", fmt.Sprintf("hrtimer=aa function=hrtimer_wakeup now=%d", base+130_000)),
		line(131, "loadgen.test", 201, 200, 0, "sched_wakeup", "comm=loadgen.test pid=101 prio=120 target_cpu=000"),
		line(400, "loadgen.test", 201, 200, 0, "sched_switch", "prev_comm=loadgen.test prev_pid=201 prev_prio=120 prev_state=S ==> next_comm=loadgen.test next_pid=101 next_prio=120"),
		line(500, "loadgen.test", 101, 100, 0, "sched_switch", "prev_comm=loadgen.test prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"),
	}
	due := base + 100_000
	dir := writeRun(t, trace, fmt.Sprintf("%d %d\n%d %d\n", due, 310_000, due+50_000, 20_000))
	out := output(t, dir)
	for _, want := range []string{
		"send loop thread 101 of process 100: 1 sleeps at 1 ns slack, 2 requests in the trace",
		"1 requests more than 100µs late; at least one was overdue for 0.3 ms in all",
		"timer late              0.0 ms   10.0%",
		"waiting for a CPU       0.3 ms   86.8%",
		"behind the stub server (process 200)",
		"running                 0.0 ms    3.2%",
		"its timer fired after the expiry asked for, µs: n 1, mean 30.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// The loop is preempted by the client's other thread at 100 (a request due then) until
// 160, runs, parks at 170 (no timer) and is woken from idle at 250; its switch in is
// not in the trace (the kernel leaves some switches from idle out): its own next event,
// at 290, ends the wait. The request is 300 µs late.
func TestPreemptedParkedAndUntracedSwitch(t *testing.T) {
	sw := func(us int64, prev, next int, state string) string {
		return line(us, "loadgen.test", prev, 100, 0, "sched_switch", fmt.Sprintf("prev_comm=x prev_pid=%d prev_prio=120 prev_state=%s ==> next_comm=y next_pid=%d next_prio=120", prev, state, next))
	}
	trace := []string{
		sleepLine(10, 101, 100, "aa", 20, 1),
		line(20, "loadgen.test", 101, 100, 0, "hrtimer_expire_entry", fmt.Sprintf("hrtimer=aa function=hrtimer_wakeup now=%d", base+20_000)),
		sw(100, 101, 102, "R+"),
		sw(160, 102, 101, "S"),
		sw(170, 101, 0, "S"),
		line(250, "<idle>", 0, 0, 0, "sched_wakeup", "comm=loadgen.test pid=101 prio=120 target_cpu=000"),
		line(290, "loadgen.test", 101, 100, 0, "sched_wakeup", "comm=loadgen.test pid=102 prio=120 target_cpu=001"),
		sw(400, 101, 0, "S"),
	}
	dir := writeRun(t, trace, fmt.Sprintf("%d %d\n", base+100_000, 300_000))
	out := output(t, dir)
	for _, want := range []string{
		"waiting for a CPU       0.1 ms   33.3%", // 100–160 and 250–290
		"behind the client's other threads                0.1 ms   20.0%",
		"behind idle                                      0.0 ms   13.3%",
		"parked                  0.1 ms   26.7%", // 170–250
		"running                 0.1 ms   40.0%", // 160–170 and 290–400
		"woken or preempted, it waited for a CPU, µs: n 1, mean 40.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// output is run's report of dir.
func output(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	if err := run(dir, 100*time.Microsecond, &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestBadInput(t *testing.T) {
	ok := []string{sleepLine(10, 101, 100, "aa", 100, 1)}
	for _, c := range []struct {
		name  string
		trace []string
		edit  func(dir string)
		want  string
	}{
		{"no tgids", []string{"    loadgen.test-101   [000] d..2. 1000.000010: hrtimer_start: hrtimer=aa"}, nil, "trace.txt:3: not a tracefs line with a tgid"},
		{"no precise thread", []string{sleepLine(10, 101, 100, "aa", 100, 50_000)}, nil, "no thread of process 100 slept at 1 ns timer slack"},
		{"bad pid", ok, func(dir string) { os.WriteFile(filepath.Join(dir, "pid"), []byte("x\n"), 0o644) }, "pid:1: want a process id"},
		{"bad requests", ok, func(dir string) { os.WriteFile(filepath.Join(dir, "requests.txt"), []byte("1 2\n1 x\n"), 0o644) }, "requests.txt:2: want"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeRun(t, c.trace, "")
			if c.edit != nil {
				c.edit(dir)
			}
			err := run(dir, 100*time.Microsecond, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
