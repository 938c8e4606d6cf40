package perftest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/run"
)

var (
	update        = flag.Bool("update", false, "rewrite the golden files in testdata/")
	updateExample = flag.Bool("update-example", false, "re-record testdata/example (the examples' output then changes)")
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name+".golden"), []byte(got), *update)
}

var healthy = synth{n: 200, ttft: 50 * time.Millisecond, itl: 10 * time.Millisecond, osl: 20, seed: 3}

// TestAssertionsPassOnHealthyRun is the control for TestAssertionsFail: the same
// assertions hold on a healthy run.
func TestAssertionsPassOnHealthyRun(t *testing.T) {
	res := healthy.result("healthy")
	c := Capture(t, func(t testing.TB) {
		res.AssertTTFT(t, 0.99, 100*time.Millisecond)
		res.AssertITL(t, 0.99, 15*time.Millisecond)
		res.AssertLatency(t, 0.99, 500*time.Millisecond)
		res.AssertErrorRate(t, 0)
		res.AssertTokenizerMatch(t)
		res.AssertGoodput(t, SLO{TTFT: 100 * time.Millisecond, ITL: 15 * time.Millisecond}, 0.95)
		res.AssertBound(t, Bound{Metric: OutputTPS, P: 0.05, Min: 50})
		res.AssertOutputThroughput(t, 100)
		res.AssertRequestThroughput(t, 10)
		res.AssertObjectives(t)
		res.AssertLengthFit(t, ISL, distribution.Length{Dist: distribution.UniformInt{Min: 100, Max: 155}}, 0)
		res.AssertOSL(t, distribution.Fixed{Value: 20})
		other := healthy
		other.seed = 9
		base := other.result("baseline")
		base.Scenario.Seed = res.Scenario.Seed // another sample of the same seeded workload
		res.AssertNoRegression(t, base)
		res.AssertSameWorkload(t, base)
		healthy.runs(5, 1).AssertNoRegression(t, healthy.runs(5, 1.01), Gate{})
	})
	if c.Failed() {
		t.Errorf("assertions failed on a healthy run:\n%s", c.Text())
	}
}

// TestAssertionsFail feeds each assertion a run that violates it and pins the message.
func TestAssertionsFail(t *testing.T) {
	slow := healthy
	slow.slowEvery = 20 // 5% of requests with 5× TTFT
	errs := healthy
	errs.errEvery = 10
	tmpl := healthy
	slower := healthy
	slower.ttft, slower.seed = 56*time.Millisecond, 4 // +12%
	longer := healthy
	longer.islBase, longer.seed = 110, 5
	tmpl.serverDiff = func(int) int { return 9 }
	for _, c := range []struct {
		name string
		res  *Result
		f    func(r *Result, t testing.TB) bool
		want string // a fragment of the first line
	}{
		{"ttft", slow.result("slow"), func(r *Result, t testing.TB) bool { return r.AssertTTFT(t, 0.99, 100*time.Millisecond) },
			"perftest: TTFT p99 = "},
		{"itl", healthy.result("healthy"), func(r *Result, t testing.TB) bool { return r.AssertITL(t, 0.5, 5*time.Millisecond) },
			"perftest: ITL p50 = "},
		{"latency", slow.result("slow"), func(r *Result, t testing.TB) bool {
			return r.AssertLatency(t, 0.95, 200*time.Millisecond)
		}, "perftest: request latency p95 = "},
		{"bound_min", healthy.result("healthy"), func(r *Result, t testing.TB) bool {
			return r.AssertBound(t, Bound{Metric: OutputTPS, P: 0.1, Min: 150})
		}, "perftest: output tokens/s per user p10 = "},
		{"error_rate", errs.result("errors"), func(r *Result, t testing.TB) bool { return r.AssertErrorRate(t, 0.05) },
			"perftest: error rate = 10% (20 of 200 requests failed), want <= 5%"},
		{"goodput", slow.result("slow"), func(r *Result, t testing.TB) bool {
			return r.AssertGoodput(t, SLO{TTFT: 100 * time.Millisecond}, 0.99)
		}, "perftest: goodput = 95% (190 of 200 good), want >= 99%"},
		{"tokenizer", tmpl.result("template"), func(r *Result, t testing.TB) bool { return r.AssertTokenizerMatch(t) },
			"perftest: tokenizer mismatch: server counted +9 input tokens vs the client on every one of 200 requests"},
		{"throughput", healthy.result("healthy"), func(r *Result, t testing.TB) bool { return r.AssertOutputThroughput(t, 1e6) },
			"perftest: output token throughput = "},
		{"isl", healthy.result("healthy"), func(r *Result, t testing.TB) bool {
			return r.AssertISL(t, distribution.Normal{Mu: 128, Sigma: 5})
		}, "perftest: ISL (server count) does not fit length(normal:128,5, min=1): KS D="},
		{"osl", healthy.result("healthy"), func(r *Result, t testing.TB) bool { return r.AssertOSL(t, distribution.Fixed{Value: 24}) },
			"perftest: OSL (server count) does not fit length(fixed:24, min=1): 200 of 200 lengths cannot come from it (e.g. 20)  ["},
		{"regression", slower.result("slower"), func(r *Result, t testing.TB) bool {
			return healthy.runs(5, 1.12).AssertNoRegression(t, healthy.runs(5, 1), Gate{})
		}, "perftest: regression gate: regressed: TTFT p50 +1"},
		{"other_workload", func() *Result {
			r := healthy.result("current")
			r.Scenario.Concurrency, r.Scenario.ISL = 8, distribution.MustSpec("fixed:256")
			return r
		}(), func(r *Result, t testing.TB) bool { return r.AssertNoRegression(t, healthy.result("baseline")) },
			"perftest: regression gate: the baseline is another workload (isl, concurrency differ): nothing was compared"},
		{"same_workload", longer.result("longer"), func(r *Result, t testing.TB) bool {
			return r.AssertSameWorkload(t, healthy.result("baseline"))
		}, "perftest: ISL: longer and baseline differ: KS D="},
		{"objectives", func() *Result {
			r := errs.result("objectives")
			//lint:ignore SA1019 the deprecated structured objectives must still be checked, as the rules they mean
			r.Scenario.Objectives = Objectives{SLO: SLO{TTFT: 100 * time.Millisecond}, Goodput: 0.9, Bounds: []Bound{{Metric: TTFT, P: 0.5, MaxTime: 10 * time.Millisecond}}}
			return r
		}(), func(r *Result, t testing.TB) bool { return r.AssertObjectives(t) }, "perftest: error rate = 10%"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ok bool
			cap := Capture(t, func(tb testing.TB) { ok = c.f(c.res, tb) })
			if ok || !cap.Failed() {
				t.Fatalf("assertion passed on a run that violates it (ok=%v failed=%v)", ok, cap.Failed())
			}
			if cap.Stopped() {
				t.Errorf("an Assert method stopped the test; only Require may")
			}
			text := cap.Text()
			if !strings.HasPrefix(text, c.want) {
				t.Errorf("message starts %q, want prefix %q", firstLine(text), c.want)
			}
			for _, want := range []string{"seed:", "re-run: go test -run '^TestX$' ./perftest", `[scenario "`} {
				if !strings.Contains(text, want) {
					t.Errorf("message lacks %q:\n%s", want, text)
				}
			}
			golden(t, "assert_"+c.name, text)
		})
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestRequireStops checks that Require methods stop the test at the breach, and that
// Assert methods let it continue.
func TestRequireStops(t *testing.T) {
	res := synth{n: 50, ttft: 300 * time.Millisecond, itl: 10 * time.Millisecond, osl: 5, errEvery: 2, seed: 1}.result("slow")
	for name, f := range map[string]func(testing.TB){
		"RequireTTFT":           func(t testing.TB) { res.RequireTTFT(t, 0.5, 100*time.Millisecond) },
		"RequireITL":            func(t testing.TB) { res.RequireITL(t, 0.5, time.Millisecond) },
		"RequireLatency":        func(t testing.TB) { res.RequireLatency(t, 0.5, time.Millisecond) },
		"RequireBound":          func(t testing.TB) { res.RequireBound(t, Bound{Metric: TTFT, P: 0.5, MaxTime: 100 * time.Millisecond}) },
		"RequireErrorRate":      func(t testing.TB) { res.RequireErrorRate(t, 0) },
		"RequireGoodput":        func(t testing.TB) { res.RequireGoodput(t, SLO{}, 0.9) },
		"RequireObjectives":     func(t testing.TB) { res.RequireObjectives(t) },
		"RequireTokenizerMatch": func(t testing.TB) { Load(t, "testdata/does-not-exist") },
	} {
		reached := false
		c := Capture(t, func(t testing.TB) { f(t); reached = true })
		if !c.Stopped() || reached {
			t.Errorf("%s: stopped=%v, code after it ran=%v; want it to stop the test", name, c.Stopped(), reached)
		}
	}
	reached := false
	c := Capture(t, func(t testing.TB) { res.AssertTTFT(t, 0.5, 100*time.Millisecond); reached = true })
	if c.Stopped() || !reached || !c.Failed() {
		t.Errorf("AssertTTFT: stopped=%v reached=%v failed=%v; want failed, not stopped", c.Stopped(), reached, c.Failed())
	}
}

func TestRerunHint(t *testing.T) {
	t.Run("sub test", func(t *testing.T) {
		if got, want := rerunHint(t, 0), `go test -run '^TestRerunHint$/^sub_test$' -count=1 ./perftest`; got != want {
			t.Errorf("rerunHint = %q, want %q", got, want)
		}
	})
}

// TestUpdateExampleRecording re-records testdata/example (used by the examples) under
// -update-example: 20 requests against the mock with fixed latencies.
func TestUpdateExampleRecording(t *testing.T) {
	if !*updateExample {
		t.Skip("re-records testdata/example only with -update-example")
	}
	if err := os.RemoveAll("testdata/example"); err != nil {
		t.Fatal(err)
	}
	sc := Scenario{
		Name: "example",
		Mock: mockserver.Config{TTFT: distribution.Spec{Distribution: distribution.Fixed{Value: 20}},
			ITL: distribution.Spec{Distribution: distribution.Fixed{Value: 2}}, TTFTJitterCV: 0.2},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 64}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 20,
			},
		},
	}
	if _, err := run.Run(t.Context(), sc, "testdata/example"); err != nil {
		t.Fatal(err)
	}
}

// TestRunGatesRunHealth: Run fails the test, as `perfgate profile` fails the gate, when
// requests failed beyond Objectives.MaxErrorRate (zero: none may fail) or when no
// request was completed; MaxErrorRate 1 allows the failures, explicitly; and
// AssertObjectives does not report the error rate a second time.
func TestRunGatesRunHealth(t *testing.T) {
	faulty := Scenario{
		Name: "faulty",
		Mock: mockserver.Config{Fast: true, Faults: mockserver.Faults{ErrorRate: 0.5}},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				Seed: 7,
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 16}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 4}},
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 40,
			},
		},
	}
	for _, tc := range []struct {
		name   string
		sc     func(Scenario) Scenario
		failed bool
		want   string
	}{
		{"errors fail by default", func(s Scenario) Scenario { return s }, true, "perftest: error rate = "},
		{"allowed explicitly", func(s Scenario) Scenario { s.Objectives.MaxErrorRate = 1; return s }, false, ""},
		{"nothing completed", func(s Scenario) Scenario {
			s.Mock.Faults = mockserver.Faults{}
			s.Requests, s.Duration = 0, time.Nanosecond
			return s
		}, true, "perftest: no request was completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res *Result
			c := Capture(t, func(tb testing.TB) { res = Run(tb, tc.sc(faulty)) })
			if c.Failed() != tc.failed {
				t.Fatalf("Run failed = %v, want %v:\n%s", c.Failed(), tc.failed, c.Text())
			}
			if c.Stopped() {
				t.Errorf("Run stopped the test; a breached gate is t.Errorf, not Fatal")
			}
			if tc.want != "" && !strings.Contains(c.Text(), tc.want) {
				t.Errorf("Run's failure lacks %q:\n%s", tc.want, c.Text())
			}
			if tc.name == "errors fail by default" {
				again := Capture(t, func(tb testing.TB) {
					if res.AssertObjectives(tb) {
						tb.Errorf("AssertObjectives passed a run whose error rate failed")
					}
				})
				if strings.Contains(again.Text(), "error rate =") {
					t.Errorf("AssertObjectives reported the error rate again:\n%s", again.Text())
				}
			}
		})
	}
}
