package sweep

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
	}{
		{"1,2,4,8", []float64{1, 2, 4, 8}},
		{"1:64:x2", []float64{1, 2, 4, 8, 16, 32, 64}},
		{"10:40:+10", []float64{10, 20, 30, 40}},
		{"5", []float64{5}},
	} {
		got, err := Levels(tc.in)
		if err != nil || !equal(got, tc.want) {
			t.Errorf("Levels(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "a,b", "0,1", "-1", "1:10:x1", "10:1:+1", "1:10:/2", "1:100000:+1"} {
		if _, err := Levels(bad); err == nil {
			t.Errorf("Levels(%q) = nil error, want one", bad)
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// fakeProbe passes below a knee.
func fakeProbe(knee float64, calls *[]float64) func(context.Context, float64) (Point, error) {
	return func(_ context.Context, load float64) (Point, error) {
		*calls = append(*calls, load)
		return Point{Pass: load <= knee}, nil
	}
}

func TestSearch(t *testing.T) {
	var calls []float64
	res, err := Search(context.Background(), SearchOptions{Lo: 1, Hi: 64, Integer: true, Tolerance: 0.01}, fakeProbe(23, &calls))
	if err != nil || !res.Found || res.Best != 23 || res.FailedAt != 24 {
		t.Errorf("Search(knee 23) = best %v found %v failedAt %v, %v; want 23, true, 24 (probes %v)", res.Best, res.Found, res.FailedAt, err, calls)
	}
	if len(calls) > 12 {
		t.Errorf("Search made %d probes, want <= 12", len(calls))
	}
	calls = nil
	res, _ = Search(context.Background(), SearchOptions{Lo: 1, Hi: 64}, fakeProbe(100, &calls))
	if !res.Found || res.Best != 64 || len(calls) != 1 {
		t.Errorf("Search where hi passes = best %v after %d probes, want 64 after 1", res.Best, len(calls))
	}
	calls = nil
	res, _ = Search(context.Background(), SearchOptions{Lo: 2, Hi: 64}, fakeProbe(1, &calls))
	if res.Found || res.FailedAt != 2 {
		t.Errorf("Search where lo fails = found %v failedAt %v, want false, 2", res.Found, res.FailedAt)
	}
	// continuous, relative tolerance
	calls = nil
	res, _ = Search(context.Background(), SearchOptions{Lo: 1, Hi: 100, Tolerance: 0.02, MaxProbes: 30}, fakeProbe(37.3, &calls))
	if !(res.Best <= 37.3 && res.Best > 37.3*0.97) {
		t.Errorf("Search(knee 37.3, tol 2%%) = %v, want within 3%% below 37.3", res.Best)
	}
	boom := errors.New("server fell over")
	_, err = Search(context.Background(), SearchOptions{Lo: 1, Hi: 8}, func(context.Context, float64) (Point, error) { return Point{}, boom })
	if !errors.Is(err, boom) {
		t.Errorf("Search with a failing probe = %v, want the probe's error", err)
	}
	if _, err := Search(context.Background(), SearchOptions{Lo: 5, Hi: 5}, fakeProbe(1, &calls)); err == nil {
		t.Error("Search with an empty range = nil error, want one")
	}
}

func metrics(tput, ttftP99 float64) record.Metrics {
	return record.Metrics{
		Stats:   map[string]record.Stat{record.MetricTTFT: {Unit: "ms", Count: 10, Avg: ttftP99 / 2, P50: ttftP99 / 2, P90: ttftP99 * 0.9, P99: ttftP99}},
		Scalars: map[string]record.Scalar{record.MetricRequestThroughput: {Unit: "requests/sec", Value: tput}},
	}
}

func TestRepeat(t *testing.T) {
	es := Repeat([]record.Metrics{metrics(10, 100), metrics(12, 110), metrics(11, 90)}, 0.95)
	var tput *Estimate
	for i := range es {
		if es[i].Metric == record.MetricRequestThroughput {
			tput = &es[i]
		}
	}
	if tput == nil || tput.Mean != 11 || tput.N != 3 {
		t.Fatalf("throughput estimate = %+v, want mean 11 over 3 runs", tput)
	}
	// mean 11, s = 1, t_{2,0.975} = 4.3027 → half-width 4.3027/sqrt(3) = 2.4841
	if half := (tput.Hi - tput.Lo) / 2; math.Abs(half-2.4841) > 1e-3 {
		t.Errorf("CI half-width = %.4f, want 2.4841 (scipy.stats.t.interval(0.95, 2, 11, 1/sqrt(3)))", half)
	}
	one := Repeat([]record.Metrics{metrics(10, 100)}, 0)
	if !math.IsNaN(one[0].Lo) {
		t.Errorf("a single run has CI %v..%v, want NaN", one[0].Lo, one[0].Hi)
	}
	var b bytes.Buffer
	WriteRepeatTable(&b, es)
	if !strings.Contains(b.String(), "Across 3 runs") || !strings.Contains(b.String(), "± 2.484") {
		t.Errorf("repeat table:\n%s\nwant the run count and the half-width", b.String())
	}
}

func TestSweepTables(t *testing.T) {
	pts := []Point{{Load: 1, Metrics: metrics(5, 50), Pass: true}, {Load: 2, Metrics: metrics(9, 400), Pass: false, Note: "TTFT p99 = 400ms, want <= 250ms"}}
	var b bytes.Buffer
	WriteSweepTable(&b, "concurrency", pts)
	out := b.String()
	if !strings.Contains(out, "PASS") || !strings.Contains(out, "FAIL  TTFT p99") || strings.Count(out, "\n") != 3 {
		t.Errorf("sweep table:\n%s", out)
	}
	b.Reset()
	WriteSweepCSV(&b, "concurrency", pts)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "concurrency,repeat,pass,request_throughput_value") || !strings.HasPrefix(lines[2], "2,0,false,9.0000") {
		t.Errorf("sweep csv:\n%s", b.String())
	}
}
