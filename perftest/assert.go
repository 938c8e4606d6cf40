package perftest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// AssertObjectives checks every objective the scenario declares (its Objectives field):
// error rate, goodput, bounds, throughput floors, tokenizer match and length fits
// (see run.Outcome.Verdicts). It reports each breach with
// t.Errorf and returns whether all held.
//
// The error-rate objective was already reported by [Run]; it is not reported again,
// but its outcome is part of the result.
func (r *Result) AssertObjectives(t testing.TB) bool {
	t.Helper()
	vs, ok := r.objectives()
	return r.each(t, vs, false) && ok
}

// RequireObjectives is AssertObjectives, then t.FailNow if any objective was breached.
func (r *Result) RequireObjectives(t testing.TB) {
	t.Helper()
	vs, ok := r.objectives()
	if !r.each(t, vs, true) || !ok {
		t.FailNow()
	}
}

// objectives returns the verdicts AssertObjectives reports, without the error-rate
// verdict and the abort Run reported already, and whether those passed.
func (r *Result) objectives() ([]check.Verdict, bool) {
	vs := r.Verdicts()
	out := vs[:0]
	for _, v := range vs {
		switch {
		case v.Check == "error-rate" && r.errorRate != nil:
		case v.Check == run.CheckAborted && r.abortReported:
		default:
			out = append(out, v)
		}
	}
	return out, (r.errorRate == nil || r.errorRate.Pass) && !r.abortReported
}

// Assert checks each rule (see [check.ParseRule]: "ttft_p99<=250ms", "error_rate<=0",
// "goodput(ttft<=200ms, itl<=20ms)>=0.95", "tokenizer_match", …) on the run, reports
// every breach with t.Errorf, and returns whether all held. A bare goodput>=X counts
// against the scenario's Objectives.SLO. A rule that does not parse is a mistake in the
// test, not a breach: Assert calls t.Fatalf naming the rule and the column.
func (r *Result) Assert(t testing.TB, rules ...string) bool {
	t.Helper()
	return r.rules(t, parseRules(t, rules), false)
}

// Require is [Result.Assert], then t.FailNow if any rule was breached.
func (r *Result) Require(t testing.TB, rules ...string) {
	t.Helper()
	r.rules(t, parseRules(t, rules), true)
}

// parseRules parses every rule, calling t.Fatalf with all the bad ones.
func parseRules(t testing.TB, texts []string) []check.Rule {
	t.Helper()
	rs, err := scenario.Objectives{Rules: texts}.ParseRules()
	if err != nil {
		t.Fatalf("perftest: %v", strings.ReplaceAll(err.Error(), "objectives.", ""))
	}
	return rs
}

// rules reports each rule's verdict; goodput rules also emit perftest.goodput.
func (r *Result) rules(t testing.TB, rs []check.Rule, fatal bool) bool {
	t.Helper()
	o := r.Scenario.Objectives
	reqs := r.Requests()
	for _, rule := range rs {
		if rule.NeedsGaps(o.SLO) { // a quantile of each request's gaps: read them back
			var err error
			if reqs, err = r.RequestsWithGaps(); err != nil {
				t.Fatalf("perftest: %v", err)
			}
			break
		}
	}
	vs := make([]check.Verdict, 0, len(rs))
	for _, rule := range rs {
		v := rule.Check(reqs, r.Metrics, o.SLO, o.Confidence)
		if v.Check == "goodput" {
			t.Attr("perftest.goodput", fmt.Sprintf("%.4g", v.Value))
		}
		vs = append(vs, v)
	}
	return r.each(t, vs, fatal)
}

// AssertGoodput checks that at least minFraction of the requests met slo (succeeded and
// met every non-zero bound), with 95% confidence: the Wilson interval's lower end must
// reach minFraction, so a small run cannot pass by luck (see [check.Goodput]). It emits
// the goodput as the test attribute perftest.goodput. It is the rule
// goodput(SLO)>=minFraction ([check.GoodputRule]).
func (r *Result) AssertGoodput(t testing.TB, slo SLO, minFraction float64) bool {
	t.Helper()
	return r.rules(t, []check.Rule{check.GoodputRule(slo, minFraction)}, false)
}

// RequireGoodput is AssertGoodput, then t.FailNow on a breach.
func (r *Result) RequireGoodput(t testing.TB, slo SLO, minFraction float64) {
	t.Helper()
	r.rules(t, []check.Rule{check.GoodputRule(slo, minFraction)}, true)
}

// AssertTTFT checks that the p-quantile (p in [0, 1]; 0.99 = p99) of time to first token
// is at most max: the rule ttft_p99<=max.
func (r *Result) AssertTTFT(t testing.TB, p float64, max time.Duration) bool {
	t.Helper()
	return r.bound(t, Bound{Metric: TTFT, P: p, MaxTime: max}, false)
}

// RequireTTFT is AssertTTFT, then t.FailNow on a breach.
func (r *Result) RequireTTFT(t testing.TB, p float64, max time.Duration) {
	t.Helper()
	r.bound(t, Bound{Metric: TTFT, P: p, MaxTime: max}, true)
}

// AssertITL checks that the p-quantile of the requests' inter-token latency (AIPerf's
// per-request ITL, (request latency − TTFT) / (OSL − 1); docs/metrics.md) is at most
// max: the rule itl_pNN<=max.
func (r *Result) AssertITL(t testing.TB, p float64, max time.Duration) bool {
	t.Helper()
	return r.bound(t, Bound{Metric: ITL, P: p, MaxTime: max}, false)
}

// RequireITL is AssertITL, then t.FailNow on a breach.
func (r *Result) RequireITL(t testing.TB, p float64, max time.Duration) {
	t.Helper()
	r.bound(t, Bound{Metric: ITL, P: p, MaxTime: max}, true)
}

// AssertLatency checks that the p-quantile of request latency is at most max: the rule
// latency_pNN<=max.
func (r *Result) AssertLatency(t testing.TB, p float64, max time.Duration) bool {
	t.Helper()
	return r.bound(t, Bound{Metric: Latency, P: p, MaxTime: max}, false)
}

// RequireLatency is AssertLatency, then t.FailNow on a breach.
func (r *Result) RequireLatency(t testing.TB, p float64, max time.Duration) {
	t.Helper()
	r.bound(t, Bound{Metric: Latency, P: p, MaxTime: max}, true)
}

// AssertBound checks a quantile bound on any per-request metric, e.g.
// Bound{Metric: OutputTPS, P: 0.1, Min: 20} (p10 of per-user output tokens/s >= 20) or
// Bound{Metric: TTFT, P: 0.99, MaxTime: 200 * time.Millisecond}: its [check.Bound.Rules].
// A bound [check.Bound.Err] rejects is a mistake in the test: t.Fatalf.
func (r *Result) AssertBound(t testing.TB, b Bound) bool {
	t.Helper()
	return r.bound(t, b, false)
}

// RequireBound is AssertBound, then t.FailNow on a breach.
func (r *Result) RequireBound(t testing.TB, b Bound) {
	t.Helper()
	r.bound(t, b, true)
}

func (r *Result) bound(t testing.TB, b Bound, fatal bool) bool {
	t.Helper()
	if err := b.Err(); err != nil {
		t.Fatalf("perftest: %+v: %s", b, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return r.rules(t, b.Rules(), fatal)
}

// AssertErrorRate checks that at most maxRate (a fraction; 0 = none) of the requests
// failed: the rule error_rate<=maxRate.
func (r *Result) AssertErrorRate(t testing.TB, maxRate float64) bool {
	t.Helper()
	return r.Assert(t, fmt.Sprintf("error_rate<=%g", maxRate))
}

// RequireErrorRate is AssertErrorRate, then t.FailNow on a breach.
func (r *Result) RequireErrorRate(t testing.TB, maxRate float64) {
	t.Helper()
	r.Require(t, fmt.Sprintf("error_rate<=%g", maxRate))
}

// AssertOutputThroughput checks that the run's output token throughput (output tokens
// over the benchmark duration) is at least minTokPerSec: the rule
// output_token_throughput>=minTokPerSec.
func (r *Result) AssertOutputThroughput(t testing.TB, minTokPerSec float64) bool {
	t.Helper()
	return r.Assert(t, fmt.Sprintf("output_token_throughput>=%g", minTokPerSec))
}

// AssertRequestThroughput checks that the run's successful requests per second are at
// least minReqPerSec: the rule request_throughput>=minReqPerSec.
func (r *Result) AssertRequestThroughput(t testing.TB, minReqPerSec float64) bool {
	t.Helper()
	return r.Assert(t, fmt.Sprintf("request_throughput>=%g", minReqPerSec))
}

// AssertTokenizerMatch checks that, for every successful request, the server counted
// exactly as many input tokens as the client: from the mock server's recording, or
// from usage.prompt_tokens for a real endpoint. The message lists the worst offenders.
// It is the rule tokenizer_match.
func (r *Result) AssertTokenizerMatch(t testing.TB) bool {
	t.Helper()
	return r.Assert(t, "tokenizer_match")
}

// RequireTokenizerMatch is AssertTokenizerMatch, then t.FailNow on a mismatch.
func (r *Result) RequireTokenizerMatch(t testing.TB) {
	t.Helper()
	r.Require(t, "tokenizer_match")
}

// AssertTokenizerMatchWithin is AssertTokenizerMatch allowing |server − client| <= tolerance tokens.
func (r *Result) AssertTokenizerMatchWithin(t testing.TB, tolerance int) bool {
	t.Helper()
	return r.Assert(t, fmt.Sprintf("tokenizer_match<=%d", tolerance))
}
