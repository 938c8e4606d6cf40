package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// ttfts returns n deterministic TTFTs in seconds: mostly around base, with a slow tail.
func ttfts(n int, base float64, seed uint64) Sample {
	r := rand.New(rand.NewPCG(seed, 1))
	s := Sample{Name: "TTFT", Unit: Seconds}
	for i := range n {
		v := base * (0.8 + 0.4*r.Float64())
		if i%50 == 7 {
			v *= 4
		}
		s.Values = append(s.Values, v)
		s.IDs = append(s.IDs, fmt.Sprint(i))
	}
	return s
}

func TestQuantileAtMost(t *testing.T) {
	s := ttfts(200, 0.080, 1)
	pass := QuantileAtMost(s, 0.99, 0.500)
	if !pass.Pass || pass.Err() != nil {
		t.Errorf("QuantileAtMost(p99 <= 500ms) failed:\n%s", pass)
	}
	fail := QuantileAtMost(s, 0.99, 0.200)
	if fail.Pass {
		t.Fatalf("QuantileAtMost(p99 <= 200ms) passed:\n%s", fail)
	}
	if !errors.Is(fail.Err(), ErrBreached) {
		t.Errorf("Err() = %v, want it to wrap ErrBreached", fail.Err())
	}
	golden(t, "quantile_pass", pass.String())
	golden(t, "quantile_fail", fail.With(Context{Scenario: "chat", Load: "concurrency=10", Requests: 200, Seed: 7,
		Rerun: "go test -run '^TestChat$' ./examples_test", Artifacts: "/tmp/out/chat"}).String())
}

func TestQuantileAtLeast(t *testing.T) {
	s := Sample{Name: "output tokens/s per user", Unit: TokPerSec, Values: []float64{50, 60, 70, 10, 80}}
	if v := QuantileAtLeast(s, 0.05, 20); v.Pass {
		t.Errorf("p5 >= 20 passed with a 10 tok/s request:\n%s", v)
	}
	if v := QuantileAtLeast(s, 0.5, 20); !v.Pass {
		t.Errorf("p50 >= 20 failed:\n%s", v)
	}
}

func TestInvalidInputsFail(t *testing.T) {
	for _, v := range []Verdict{
		QuantileAtMost(Sample{Name: "TTFT", Unit: Seconds}, 0.99, 1),
		QuantileAtMost(Sample{Name: "TTFT", Values: []float64{1}}, 99, 1),
		QuantileAtMost(Sample{Name: "TTFT", Values: []float64{math.NaN()}}, 0.5, 1),
		Goodput(nil, SLO{}, 0.9, 0),
		Goodput([]Request{{}}, SLO{}, 1.5, 0),
		Goodput([]Request{{}}, SLO{}, 0.5, 1),
		ErrorRate(nil, 0.1),
		TokenizerMatch([]Request{{ServerISL: -1}}, 0),
		ThroughputAtLeast("output token throughput", TokPerSec, math.NaN(), 1),
	} {
		if v.Pass {
			t.Errorf("verdict on invalid input passed: %s", v)
		}
		if !strings.HasPrefix(v.Summary, "cannot check") {
			t.Errorf("summary = %q, want it to start with \"cannot check\"", v.Summary)
		}
	}
}

func TestSmallNNote(t *testing.T) {
	v := QuantileAtMost(Sample{Name: "TTFT", Unit: Seconds, Values: []float64{0.1, 0.2, 0.3}}, 0.99, 1)
	if !strings.Contains(v.String(), "too small to estimate p99") {
		t.Errorf("no small-n note in:\n%s", v)
	}
}

func reqs(n int, f func(i int, r *Request)) []Request {
	out := make([]Request, n)
	for i := range out {
		out[i] = Request{ID: fmt.Sprint(i), TTFT: 0.05, Latency: 1, OSL: 101, ISL: 128, ServerISL: 128}
		f(i, &out[i])
	}
	return out
}

func TestGoodput(t *testing.T) {
	slo := SLO{TTFT: 100 * time.Millisecond, ITL: 15 * time.Millisecond, Latency: 2 * time.Second}
	// (1-0.05)/100 = 9.5ms ITL: all good.
	all := reqs(200, func(int, *Request) {})
	if v := Goodput(all, slo, 0.95, 0); !v.Pass {
		t.Errorf("200/200 good failed goodput >= 95%%:\n%s", v)
	} else {
		golden(t, "goodput_pass", v.String())
	}
	// 20/20 good cannot show 95% at 95% confidence: Wilson lower bound 83.9%.
	small := reqs(20, func(int, *Request) {})
	v := Goodput(small, slo, 0.95, 0)
	if v.Pass {
		t.Errorf("20/20 good passed goodput >= 95%%; a small n must not pass by luck:\n%s", v)
	}
	golden(t, "goodput_small_n", v.String())
	// 15% slow TTFT, 5% errors, 5% slow ITL.
	bad := reqs(200, func(i int, r *Request) {
		switch {
		case i%20 < 3:
			r.TTFT = 0.101 + float64(i)/1000
		case i%20 == 3:
			r.Err = "http_status: 503 Service Unavailable"
		case i%20 == 4:
			r.Latency = 2.5
		}
	})
	v = Goodput(bad, slo, 0.95, 0)
	if v.Pass || v.Value != 0.75 {
		t.Errorf("goodput = %v pass=%v, want 0.75 failing", v.Value, v.Pass)
	}
	golden(t, "goodput_fail", v.String())
}

func TestGoodputITLPercentile(t *testing.T) {
	// One 50ms stall among 99 gaps of 10ms: mean ITL 10.4ms passes 15ms, p99 ITL fails it.
	gaps := make([]float64, 100)
	for i := range gaps {
		gaps[i] = 0.010
	}
	gaps[50] = 0.050
	r := []Request{{ID: "0", TTFT: 0.05, Latency: 1.1, OSL: 101, Gaps: gaps, ServerISL: -1}}
	if v := Goodput(r, SLO{ITL: 15 * time.Millisecond}, 0, 0); v.Value != 1 {
		t.Errorf("mean-ITL goodput = %v, want 1", v.Value)
	}
	if v := Goodput(r, SLO{ITL: 15 * time.Millisecond, ITLPercentile: 0.995}, 0, 0); v.Value != 0 {
		t.Errorf("p99.5-ITL goodput = %v, want 0", v.Value)
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{20, 20, 0.8389, 1},   // 20/(20+1.96²)
		{200, 200, 0.9812, 1}, //
		{81, 263, 0.2553, 0.3662},
	} {
		lo, hi := wilson(c.k, c.n, 0.95)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("wilson(%d, %d, 0.95) = %.4f, %.4f, want %.4f, %.4f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestErrorRate(t *testing.T) {
	rs := reqs(100, func(i int, r *Request) {
		switch {
		case i%10 == 3:
			r.Err = "http_status: 503 Service Unavailable"
		case i == 42:
			r.Err = "timeout: idle timeout 30s expired"
		}
	})
	if v := ErrorRate(rs, 0.2); !v.Pass {
		t.Errorf("11%% errors failed <= 20%%:\n%s", v)
	}
	v := ErrorRate(rs, 0.01)
	if v.Pass {
		t.Fatalf("11%% errors passed <= 1%%:\n%s", v)
	}
	golden(t, "error_rate_fail", v.String())
}

func TestThroughput(t *testing.T) {
	v := ThroughputAtLeast("output token throughput", TokPerSec, 812.4, 1000, Line{"duration", "12.3s (200 requests)"})
	if v.Pass {
		t.Fatalf("812 >= 1000 passed")
	}
	golden(t, "throughput_fail", v.String())
	if v := ThroughputAtLeast("request throughput", ReqPerSec, 12, 10); !v.Pass {
		t.Errorf("12 >= 10 failed: %s", v)
	}
}

func TestTokenizerMatch(t *testing.T) {
	same := reqs(50, func(int, *Request) {})
	if v := TokenizerMatch(same, 0); !v.Pass {
		t.Errorf("identical counts failed:\n%s", v)
	}
	// A chat template counted by the server only: +7 on every request.
	tmpl := reqs(50, func(_ int, r *Request) { r.ServerISL = r.ISL + 7 })
	v := TokenizerMatch(tmpl, 0)
	if v.Pass {
		t.Fatalf("constant +7 offset passed")
	}
	golden(t, "tokenizer_constant", v.String())
	if v := TokenizerMatch(tmpl, 7); !v.Pass {
		t.Errorf("+7 offset failed with tolerance 7:\n%s", v)
	}
	// A different tokenizer: scattered differences.
	diff := reqs(50, func(i int, r *Request) {
		if i%7 == 2 {
			r.ServerISL = r.ISL + i%5 - 2
		}
		if i == 30 {
			r.ServerISL = r.ISL + 12
		}
		if i == 31 {
			r.Err = "timeout"
			r.ServerISL = 0
		}
	})
	v = TokenizerMatch(diff, 1)
	if v.Pass {
		t.Fatalf("scattered offsets passed")
	}
	golden(t, "tokenizer_scattered", v.String())

	// Per-request chat template overheads (7 or 8 tokens, as the client rendered
	// them): exact when the server counted the same rendering…
	chat := reqs(50, func(i int, r *Request) { r.Overhead = 7 + i%2; r.ServerISL = r.ISL + r.Overhead })
	if v := TokenizerMatch(chat, 0); !v.Pass || !strings.Contains(v.String(), "+7/+8 tokens beyond the message contents") {
		t.Errorf("per-request overheads: got\n%s\nwant a pass naming +7/+8", v)
	}
	// …and off by one where the server counted one more.
	chat[3].ServerISL++
	if v := TokenizerMatch(chat, 0); v.Pass || !strings.Contains(v.Summary, "1 of 50 requests") {
		t.Errorf("one request off by one: got\n%s\nwant a failure naming 1 of 50", v)
	}
	// A request whose client could not render the template: said so.
	old := reqs(50, func(_ int, r *Request) { r.OverheadUnknown = true; r.ServerISL = r.ISL + 7 })
	v = TokenizerMatch(old, 0)
	if v.Pass {
		t.Fatalf("old chat recording with +7 passed")
	}
	golden(t, "tokenizer_template_unknown", v.String())
}

func TestSLOJSON(t *testing.T) {
	var s SLO
	if err := s.UnmarshalJSON([]byte(`{"ttft":"200ms","itl":"20ms","latency":"2s","itl_percentile":0.99}`)); err != nil {
		t.Fatal(err)
	}
	want := SLO{TTFT: 200 * time.Millisecond, ITL: 20 * time.Millisecond, Latency: 2 * time.Second, ITLPercentile: 0.99}
	if s != want {
		t.Errorf("UnmarshalJSON = %+v, want %+v", s, want)
	}
	b, _ := s.MarshalJSON()
	if got := string(b); got != `{"ttft":"200ms","itl":"20ms","latency":"2s","itl_percentile":0.99}` {
		t.Errorf("MarshalJSON = %s", got)
	}
	if err := s.UnmarshalJSON([]byte(`{"ttft":"fast"}`)); err == nil {
		t.Error("UnmarshalJSON accepted ttft \"fast\"")
	}
	// A bare number has no unit: rejected, not read as nanoseconds.
	if err := s.UnmarshalJSON([]byte(`{"ttft":250}`)); err == nil || !strings.Contains(err.Error(), DurationForm) {
		t.Errorf("UnmarshalJSON(ttft: 250) = %v; want an error quoting the accepted form", err)
	}
	if err := s.UnmarshalJSON([]byte(`{"tfft":"250ms"}`)); err == nil {
		t.Error("UnmarshalJSON accepted the unknown field tfft")
	}
}

func TestBoundJSON(t *testing.T) {
	var b Bound
	if err := json.Unmarshal([]byte(`{"metric":"ttft","p":0.99,"max_time":"250ms"}`), &b); err != nil || b != (Bound{Metric: TTFT, P: 0.99, MaxTime: 250 * time.Millisecond}) {
		t.Errorf("Unmarshal = %+v, %v", b, err)
	}
	if out, _ := json.Marshal(b); string(out) != `{"metric":"ttft","p":0.99,"max_time":"250ms"}` {
		t.Errorf("Marshal = %s", out)
	}
	if err := json.Unmarshal([]byte(`{"metric":"ttft","p":0.99,"max_time":0.25}`), &b); err == nil {
		t.Error("a bare number as max_time was accepted")
	}
	for _, c := range []struct {
		b    Bound
		want string
	}{
		{Bound{Metric: TTFT, P: 0.99, Max: 0.2}, "ttft is a latency: bound it with max_time/min_time"},
		{Bound{Metric: OSL, P: 0.5, MaxTime: time.Second}, "osl is not a latency: bound it with max/min in tok"},
		{Bound{Metric: ISL, P: 0.5}, "set max or min"},
		{Bound{Metric: "ttfb", P: 2, Max: 1}, `metric "ttfb": want ` + MetricNames() + "\np 2: want a quantile level in [0, 1]"},
	} {
		if err := c.b.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v.Err() = %v; want %q", c.b, err, c.want)
		}
		if vs := c.b.Check(nil); len(vs) != 1 || vs[0].Pass {
			t.Errorf("%+v.Check = %v; want one failing verdict", c.b, vs)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		u    Unit
		x    float64
		want string
	}{
		{Seconds, 0.412, "412ms"}, {Seconds, 1.914, "1.91s"}, {Seconds, 0.0882, "88.2ms"},
		{Seconds, 0.9996, "1s"}, {Seconds, 0.00095, "950µs"}, {Seconds, 0, "0s"},
		{Fraction, 0.975, "97.5%"}, {Tokens, 128, "128"}, {TokPerSec, 812.4, "812 tok/s"},
		{None, 0.000123, "0.000123"},
	} {
		if got := c.u.Format(c.x); got != c.want {
			t.Errorf("Unit(%q).Format(%v) = %q, want %q", c.u, c.x, got, c.want)
		}
	}
}

func TestAll(t *testing.T) {
	ok := Verdict{Pass: true}
	bad := Verdict{Summary: "x = 2, want <= 1"}
	if err := All(ok, ok); err != nil {
		t.Errorf("All(pass, pass) = %v", err)
	}
	if err := All(ok, bad, bad); err == nil || !errors.Is(err, ErrBreached) || strings.Count(err.Error(), "want <= 1") != 2 {
		t.Errorf("All(pass, fail, fail) = %v", err)
	}
}

func TestFailureUnwrapsByStatus(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		want error
	}{{Decided, ErrBreached}, {Inconclusive, ErrInconclusive}, {Invalid, ErrInvalidRun}} {
		err := Verdict{Status: tc.s, Summary: "x"}.Err()
		if !errors.Is(err, tc.want) {
			t.Errorf("Verdict{Status: %v}.Err() = %v, want it to wrap %v", tc.s, err, tc.want)
		}
		if tc.s != Decided && errors.Is(err, ErrBreached) {
			t.Errorf("Verdict{Status: %v}.Err() wraps ErrBreached; an %v answer is not a breach", tc.s, tc.s)
		}
	}
	if err := (Verdict{Status: Inconclusive, Pass: true}).Err(); err != nil {
		t.Errorf("a passing inconclusive verdict gives error %v, want nil", err)
	}
}
