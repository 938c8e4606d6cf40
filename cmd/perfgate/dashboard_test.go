package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// frame is what a test reads back from the dashboard's final frame.
type frame struct {
	done, failed   int
	inFlight       int                   // -1 = not shown
	run            map[string][3]float64 // row label → run p50, p90, p99 (NaN = "-")
	runOut, runReq float64
}

// parseFinalFrame reads the plain final frame the dashboard leaves on the normal
// screen: the text after the terminal left the alternate screen.
func parseFinalFrame(out string) (frame, error) {
	i := strings.LastIndex(out, "\x1b[?1049l")
	if i < 0 {
		return frame{}, errors.New("the alternate screen was never left")
	}
	f := frame{run: map[string][3]float64{}, inFlight: -1}
	lines := strings.Split(strings.ReplaceAll(out[i:], "\r", ""), "\n")
	val := func(s string) float64 {
		if s == "-" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.Inf(1)
		}
		return v
	}
	seen := 0
	for k, l := range lines {
		fs := strings.Fields(l)
		switch {
		case len(fs) >= 4 && fs[0] == "requests":
			d, _, _ := strings.Cut(fs[1], "/")
			f.done, _ = strconv.Atoi(d)
			f.failed, _ = strconv.Atoi(fs[3])
			if j := slices.Index(fs, "flight"); j > 0 && j+1 < len(fs) && fs[j-1] == "in" {
				f.inFlight, _ = strconv.Atoi(fs[j+1])
			}
			seen++
		case len(fs) >= 6 && fs[0] != "(ms)" && fs[0] != "throughput":
			for _, r := range dashRows {
				if strings.HasPrefix(l, r.label+" ") {
					n := len(fs)
					f.run[r.label] = [3]float64{val(fs[n-3]), val(fs[n-2]), val(fs[n-1])}
				}
			}
		case len(fs) >= 1 && fs[0] == "throughput" && k+1 < len(lines):
			vs := strings.Fields(lines[k+1])
			if len(vs) != 4 {
				return f, fmt.Errorf("throughput line %q: want 4 values", lines[k+1])
			}
			f.runOut, f.runReq = val(vs[2]), val(vs[3])
			seen++
		}
	}
	if seen != 2 || len(f.run) != len(dashRows) {
		return f, fmt.Errorf("no complete final frame after the alternate screen:\n%s", out[i:])
	}
	return f, nil
}

// matches reports how f differs from the run's metrics.json, to the two decimals shown.
func (f frame) matches(m record.Metrics) error {
	var errs []error
	near := func(what string, got, want float64) {
		if math.IsNaN(got) || math.Abs(got-want) > 0.005+1e-9 {
			errs = append(errs, fmt.Errorf("%s: dashboard %.4f, metrics.json %.4f", what, got, want))
		}
	}
	failed := 0
	for _, n := range m.Errors {
		failed += n
	}
	lat := m.Stats[record.MetricRequestLatency]
	if f.failed != failed || f.done != lat.Count+failed {
		errs = append(errs, fmt.Errorf("dashboard %d requests, %d failed; metrics.json %d, %d failed", f.done, f.failed, lat.Count+failed, failed))
	}
	for _, r := range dashRows {
		st, ok := m.Stats[r.name]
		got := f.run[r.label]
		if !ok {
			if !math.IsNaN(got[0]) {
				errs = append(errs, fmt.Errorf("%s: dashboard %v, not in metrics.json", r.label, got))
			}
			continue
		}
		near(r.label+" p50", got[0], st.P50)
		near(r.label+" p90", got[1], st.P90)
		near(r.label+" p99", got[2], st.P99)
	}
	near("output token throughput", f.runOut, m.Scalars["output_token_throughput"].Value)
	near("request throughput", f.runReq, m.Scalars["request_throughput"].Value)
	return errors.Join(errs...)
}

// terminalLeftClean checks the escape sequences a full-screen program wrote: the
// alternate screen entered and then left, the cursor shown after it was last hidden.
func terminalLeftClean(out string) error {
	enter, leave := strings.LastIndex(out, "\x1b[?1049h"), strings.LastIndex(out, "\x1b[?1049l")
	if enter < 0 || leave < enter {
		return fmt.Errorf("alternate screen entered at byte %d, last left at %d: the terminal is left on it", enter, leave)
	}
	if hide, show := strings.LastIndex(out, "\x1b[?25l"), strings.LastIndex(out, "\x1b[?25h"); hide >= 0 && show < hide {
		return fmt.Errorf("cursor hidden at byte %d and not shown after", hide)
	}
	return nil
}

// The final frame's numbers, computed from records through the aggregator, are the
// catalogue's (metric.Compute, as metrics.json has them); a changed number is found.
// At 20,000 requests too (the size users run).
func TestDashboardFinalFrameIsTheMetrics(t *testing.T) {
	for _, n := range []int{300, 20000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testFinalFrame(t, n) })
	}
}

func testFinalFrame(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	var recs []record.Client
	for i := range n {
		sent := time.Duration(i) * 3 * time.Millisecond
		ttft := time.Duration(5+rng.ExpFloat64()*20) * time.Millisecond
		r := record.Client{RequestID: fmt.Sprint(i), Stream: true, Status: 200, Scheduled: sent - time.Duration(rng.IntN(3))*time.Millisecond, Sent: sent}
		t0 := sent + ttft
		for c := range 8 {
			r.Chunks = append(r.Chunks, record.Chunk{T: t0 + time.Duration(c)*2*time.Millisecond, Tokens: 1})
		}
		r.Done = t0 + 16*time.Millisecond
		r.OSL, r.ISL = 8, 16
		if i%50 == 7 {
			r.Status, r.Chunks, r.Error, r.ErrorKind = 500, nil, "boom", record.ErrHTTPStatus
		}
		recs = append(recs, r)
	}
	d := newDashboard(nil, nil, "t", 0, 0, metric.Options{})
	a := newDashAgg(d.opt)
	for i := range recs {
		a.add(&recs[i])
	}
	s := a.snapshot(d, true)
	s.final = true
	f, err := parseFinalFrame("\x1b[?1049l" + render(s, 0, "t") + "\n")
	if err != nil {
		t.Fatal(err)
	}
	m := metric.Compute(recs, metric.Options{}, nil)
	if err := f.matches(m); err != nil {
		t.Fatal(err)
	}
	f.run["TTFT"] = [3]float64{f.run["TTFT"][0] + 0.01, f.run["TTFT"][1], f.run["TTFT"][2]}
	if err := f.matches(m); err == nil || !strings.Contains(err.Error(), "TTFT p50") {
		t.Errorf("a TTFT p50 0.01 ms off: %v, want a TTFT p50 difference", err)
	}
}

func TestTerminalLeftClean(t *testing.T) {
	for _, c := range []struct {
		out string
		ok  bool
	}{
		{"\x1b[?1049h\x1b[?25lframe\x1b[?25h\x1b[?1049lfinal", true},
		{"\x1b[?1049h\x1b[?25lframe", false},
		{"\x1b[?1049h\x1b[?25lframe\x1b[?1049l", false},
		{"\x1b[?1049h\x1b[?25lframe\x1b[?25h", false},
		{"plain", false},
	} {
		if err := terminalLeftClean(c.out); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.out, err, c.ok)
		}
	}
}

// sorted keeps its values sorted across flushes: its quantiles are metric.Quantile's.
func TestDashboardSortedMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var v sorted
	var all []float64
	for round := range 5 {
		for range 100 + round*37 {
			x := rng.NormFloat64()
			v.add(x)
			all = append(all, x)
		}
		s := v.flush()
		for _, p := range []float64{0, 0.5, 0.9, 0.99, 1} {
			if got, want := metric.QuantileSorted(s, p), metric.Quantile(all, p); got != want {
				t.Fatalf("round %d p%v: %v, want %v", round, p, got, want)
			}
		}
	}
}

// The sink never waits: past the queue's capacity records are skipped and counted.
func TestDashboardSinkNeverBlocks(t *testing.T) {
	d := newDashboard(nil, nil, "t", 0, 0, metric.Options{})
	for range dashQueue + 10 {
		d.sink(record.Client{})
	}
	if got := d.dropped.Load(); got != 10 {
		t.Errorf("dropped %d, want 10", got)
	}
}

func TestResolveUI(t *testing.T) {
	t.Setenv("TERM", "xterm")
	for _, c := range []struct {
		flag string
		tty  bool
		want string
	}{
		{"", true, uiDashboard}, {"", false, uiSimple}, {uiDashboard, false, uiSimple},
		{uiSimple, true, uiSimple}, {uiNone, true, uiNone}, {uiNone, false, uiNone},
	} {
		if got := resolveUI(c.flag, c.tty); got != c.want {
			t.Errorf("resolveUI(%q, %v) = %q, want %q", c.flag, c.tty, got, c.want)
		}
	}
	t.Setenv("TERM", "dumb")
	if got := resolveUI("", true); got != uiSimple {
		t.Errorf("TERM=dumb: %q, want simple", got)
	}
}
