package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// abortLongRun is the length of the runs an abort watch is to stop: a run it fails
// to stop takes this long and fails its test, one it stops ends at its first look
// after the window fills (loadgen.AbortTick), whatever the machine's speed.
const abortLongRun = 2 * time.Minute

// stormScenario is a closed loop against the mock answering errorRate of its requests
// with a 500, for stop, aborted by a.
func stormScenario(errorRate float64, stop loadgen.Stop, a scenario.Abort) scenario.Scenario {
	return scenario.Scenario{
		Name: "storm",
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:16"), OSL: distribution.MustSpec("fixed:4"), Seed: 1},
			Load:     loadgen.Load{Concurrency: 4},
			Stop:     stop,
		},
		Mock: mockserver.Config{
			TTFT: distribution.MustSpec("fixed:1"), ITL: distribution.MustSpec("fixed:0.1"),
			Faults: mockserver.Faults{ErrorRate: errorRate},
		},
		Objectives: scenario.Objectives{Rules: []string{"error_rate<=1"}},
		Abort:      a,
	}
}

// TestAbortRuleStopsErrorStorm: every request of a run of two minutes fails (the
// mock's fault injection at rate 1): the rule error_rate>0.2 stops it once its window
// holds MinRequests, the run keeps its records, the manifest and the exports say it
// was aborted, and the aborted verdict fails among the objectives (exit 99), not the
// validity checks (which would make it exit 1).
func TestAbortRuleStopsErrorStorm(t *testing.T) {
	dir := t.TempDir()
	out, err := Run(context.Background(), stormScenario(1, loadgen.Stop{Duration: abortLongRun}, scenario.Abort{Rules: []string{"error_rate>0.2"}}), dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.AbortedBy() != loadgen.AbortObjective || !strings.HasPrefix(out.Aborted(), "abort rule error_rate>0.2 held at ") ||
		!strings.Contains(out.Aborted(), "error rate = 100%") {
		t.Fatalf("aborted by %q: %q", out.AbortedBy(), out.Aborted())
	}
	if out.Self.Elapsed >= abortLongRun {
		t.Errorf("the run went on for %v", out.Self.Elapsed)
	}
	v := find(out.Check(), CheckAborted)
	if v == nil || v.Pass || v.Status != check.Decided || !strings.HasPrefix(v.Summary, "aborted: abort rule error_rate>0.2") {
		t.Errorf("aborted verdict among the objectives: %v", v)
	}
	for _, v := range out.Validity() {
		if !v.Pass {
			t.Errorf("a rule's abort is no invalid measurement, but %s failed: %s", v.Check, v.Summary)
		}
	}
	checkAbortedOnDisk(t, dir, out.Aborted(), scenario.DefaultAbortMinRequests)
}

// checkAbortedOnDisk: the run in dir kept at least min records, and its manifest
// and AIPerf export say it was aborted (was_cancelled) and why; read back, it is.
func checkAbortedOnDisk(t *testing.T, dir, why string, min int) {
	t.Helper()
	recs, err := loadClient(filepath.Join(dir, ClientFile))
	if err != nil || len(recs) < min {
		t.Errorf("records on disk: %d (want >= %d), %v", len(recs), min, err)
	}
	var m reportgen.Manifest
	if b, err := os.ReadFile(filepath.Join(dir, reportgen.ManifestFile)); err != nil || json.Unmarshal(b, &m) != nil || m.Aborted != why {
		t.Errorf("manifest aborted = %q (%v), want %q", m.Aborted, err, why)
	}
	var exp struct {
		WasCancelled bool `json:"was_cancelled"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, reportgen.AIPerfJSONFile)); err != nil || json.Unmarshal(b, &exp) != nil || !exp.WasCancelled {
		t.Errorf("export %s: was_cancelled %v (%v)", reportgen.AIPerfJSONFile, exp.WasCancelled, err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Aborted() != why {
		t.Errorf("read back: aborted %q, want %q", back.Aborted(), why)
	}
}

// TestAbortLatencyRule: a latency condition is judged on the live records' own
// timings: the mock's TTFT is 20 ms, so ttft_p50>5ms stops a healthy run of two
// minutes, and ttft_p50>10s (TestAbortNotFired) does not.
func TestAbortLatencyRule(t *testing.T) {
	sc := stormScenario(0, loadgen.Stop{Duration: abortLongRun}, scenario.Abort{Rules: []string{"ttft_p50>5ms"}})
	sc.Mock.TTFT = distribution.MustSpec("fixed:20")
	out, err := Run(context.Background(), sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out.AbortedBy() != loadgen.AbortObjective || !strings.Contains(out.Aborted(), "abort rule ttft_p50>5ms held at ") || !strings.Contains(out.Aborted(), "TTFT p50 = 2") {
		t.Errorf("aborted by %q: %q", out.AbortedBy(), out.Aborted())
	}
}

// TestFailedRequestThresholdInvalid: AIPerf's failed-request threshold stops the same
// storm as an invalid measurement (exit 1): the aborted verdict is a failing validity
// verdict, and the objectives do not carry it.
func TestFailedRequestThresholdInvalid(t *testing.T) {
	dir := t.TempDir()
	out, err := Run(context.Background(), stormScenario(1, loadgen.Stop{Duration: abortLongRun}, scenario.Abort{FailedRequestThreshold: 0.5, MinRequests: 30}), dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.AbortedBy() != loadgen.AbortInvalid || !strings.HasPrefix(out.Aborted(), "failed-request threshold: ") {
		t.Fatalf("aborted by %q: %q", out.AbortedBy(), out.Aborted())
	}
	v := find(out.Validity(), CheckAborted)
	if v == nil || v.Pass || v.Status != check.Invalid {
		t.Errorf("aborted validity verdict: %v", v)
	}
	if find(out.Check(), CheckAborted) != nil {
		t.Error("an invalid run's abort is among its objectives")
	}
	if cb := find(out.Validity(), validity.CheckClientBound); cb != nil && !cb.Pass {
		t.Errorf("a failed-request abort is not client-bound: %s", cb.Summary)
	}
	checkAbortedOnDisk(t, dir, out.Aborted(), 30)
}

// TestAbortNotFired: the failure paths. A healthy run is not stopped by a rule that
// would stop a storm; a storm is not stopped before the delay (longer than the run),
// nor by a rule whose window never holds MinRequests, nor by a threshold it does not
// pass; each run completes all its requests.
func TestAbortNotFired(t *testing.T) {
	const n = 60
	for _, tc := range []struct {
		name      string
		errorRate float64
		a         scenario.Abort
	}{
		{"healthy", 0, scenario.Abort{Rules: []string{"error_rate>0.2", "ttft_p50>10s"}, FailedRequestThreshold: 0.1}},
		{"before the delay", 1, scenario.Abort{Rules: []string{"error_rate>0.2"}, Delay: time.Hour}},
		{"window too small", 1, scenario.Abort{Rules: []string{"error_rate>0.2"}, MinRequests: n + 1}},
		{"threshold not passed", 1, scenario.Abort{FailedRequestThreshold: 0.1, MinRequests: n + 1}},
		{"latency rule on failures only", 1, scenario.Abort{Rules: []string{"ttft_p50>1ms"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Run(context.Background(), stormScenario(tc.errorRate, loadgen.Stop{Requests: n}, tc.a), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if out.Aborted() != "" || find(out.Check(), CheckAborted) != nil || find(out.Validity(), CheckAborted) != nil {
				t.Errorf("aborted: %q", out.Aborted())
			}
			if got := out.Context("").Requests; got != n {
				t.Errorf("%d requests, want %d", got, n)
			}
		})
	}
}

// abortRecord is a measured request of the watch's unit tests: ok or failed, with
// the given TTFT.
func abortRecord(i int, ok bool, ttft time.Duration) *record.Client {
	c := &record.Client{Index: i, Stream: true, Done: ttft + time.Millisecond, OSL: 2, ISL: 16, UsagePromptTokens: -1,
		Chunks: []record.Chunk{{T: ttft, Tokens: 1}, {T: ttft + time.Millisecond, Tokens: 1}}}
	if !ok {
		c.ErrorKind, c.Error = "http_status", "500"
	}
	return c
}

// TestAbortWatchWindow drives the watch with constructed requests on its clock: the
// window keeps only the requests that ended in the last Window, so an error burst
// that has passed stops nothing, a new one does; the delay and the grace floor hold
// it back; the failed-request threshold counts the whole run.
func TestAbortWatchWindow(t *testing.T) {
	const s = time.Second
	w := newAbortWatch(scenario.Abort{Rules: []string{"error_rate>0.5"}, Window: 10 * s, MinRequests: 10, Delay: 5 * s}, metric.Options{}).(*abortWatch)
	// 20 failures in the first 2 s: before the delay, nothing.
	for i := range 20 {
		w.Observe(abortRecord(i, false, 10*time.Millisecond), time.Duration(i)*100*time.Millisecond)
	}
	if _, stop := w.Check(2 * s); stop {
		t.Fatal("stopped before the delay")
	}
	// At 13 s they have left the 10 s window, and 15 good requests ended since.
	for i := range 15 {
		w.Observe(abortRecord(20+i, true, 10*time.Millisecond), 12*s+time.Duration(i)*time.Millisecond)
	}
	if why, stop := w.Check(13 * s); stop {
		t.Fatalf("stopped on a burst that left the window: %s", why.Reason)
	}
	if w.n != 15 {
		t.Errorf("window holds %d requests, want 15", w.n)
	}
	// 16 failures now: 16 of 31 in the window failed.
	for i := range 16 {
		w.Observe(abortRecord(35+i, false, 10*time.Millisecond), 13*s+time.Duration(i)*time.Millisecond)
	}
	why, stop := w.Check(14 * s)
	if !stop || why.Kind != loadgen.AbortObjective || !strings.Contains(why.Reason, "error rate = 51.6% (16 of 31 requests failed)") || !strings.Contains(why.Reason, "over the last 10s (31 requests)") {
		t.Errorf("stop %v: %+v", stop, why)
	}
	// The failed-request threshold counts the run: 36 of 51 failed.
	th := newAbortWatch(scenario.Abort{FailedRequestThreshold: 0.7, MinRequests: 10}, metric.Options{}).(*abortWatch)
	for i := range 51 {
		th.Observe(abortRecord(i, i >= 20 && i < 35, 0), time.Duration(i)*s)
	}
	why, stop = th.Check(60 * s)
	if !stop || why.Kind != loadgen.AbortInvalid || !strings.Contains(why.Reason, "36 of 51 requests failed (70.6%) > 70%") {
		t.Errorf("threshold: stop %v: %+v", stop, why)
	}
	th2 := newAbortWatch(scenario.Abort{FailedRequestThreshold: 0.75, MinRequests: 10}, metric.Options{}).(*abortWatch)
	th2.ended, th2.failed = th.ended, th.failed
	if _, stop := th2.Check(60 * s); stop {
		t.Error("threshold 75% stopped at 70.6% failed")
	}
}

// TestAbortWatchLarge: at the sizes users run (20,000 requests, at 2,000 a second,
// the last 5,500 slow) the window is bounded by its duration, and by
// MaxAbortWindowRequests whatever its duration: a median rule, looked at every 1,000
// requests, first holds when the slow requests are most of the window: at request
// 16,999 with a 2 s window (4,001 requests, 2,500 slow), at the last with a window of
// an hour (capped at 10,000, 5,500 slow); a window of all 20,000 would never hold.
func TestAbortWatchLarge(t *testing.T) {
	for _, tc := range []struct {
		window      time.Duration
		held, holds int
	}{{2 * time.Second, 16_999, 4_001}, {time.Hour, 19_999, scenario.MaxAbortWindowRequests}} {
		w := newAbortWatch(scenario.Abort{Rules: []string{"ttft_p50>100ms"}, Window: tc.window}, metric.Options{}).(*abortWatch)
		const n = 20_000
		held := -1
		for i := range n {
			ttft := 5 * time.Millisecond
			if i >= n-5_500 {
				ttft = 200 * time.Millisecond
			}
			now := time.Duration(i) * time.Second / 2000
			w.Observe(abortRecord(i, true, ttft), now)
			if i%1000 == 999 {
				if _, stop := w.Check(now); stop && held < 0 {
					held = i
					if w.n != tc.holds {
						t.Errorf("window %v: holds %d requests, want %d", tc.window, w.n, tc.holds)
					}
				}
			}
		}
		if held != tc.held {
			t.Errorf("window %v: first held at request %d, want %d", tc.window, held, tc.held)
		}
	}
}
