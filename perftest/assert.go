package perftest

import (
	"fmt"
	"testing"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
)

// AssertObjectives checks every objective the scenario declares (its Objectives field):
// error rate, goodput, bounds, throughput floors, tokenizer match and length fits
// (see scenario.Outcome.Verdicts). It reports each breach with
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
// verdict Run reported already, and whether that one passed.
func (r *Result) objectives() ([]check.Verdict, bool) {
	vs := r.Verdicts()
	if r.errorRate == nil {
		return vs, true
	}
	out := vs[:0]
	for _, v := range vs {
		if v.Check != "error-rate" {
			out = append(out, v)
		}
	}
	return out, r.errorRate.Pass
}

// AssertGoodput checks that at least minFraction of the requests met slo (succeeded and
// met every non-zero bound), with 95% confidence: the Wilson interval's lower end must
// reach minFraction, so a small run cannot pass by luck (see [check.Goodput]). It emits
// the goodput as the test attribute perftest.goodput.
func (r *Result) AssertGoodput(t testing.TB, slo SLO, minFraction float64) bool {
	t.Helper()
	return r.goodput(t, slo, minFraction, false)
}

// RequireGoodput is AssertGoodput, then t.FailNow on a breach.
func (r *Result) RequireGoodput(t testing.TB, slo SLO, minFraction float64) {
	t.Helper()
	r.goodput(t, slo, minFraction, true)
}

func (r *Result) goodput(t testing.TB, slo SLO, minFraction float64, fatal bool) bool {
	t.Helper()
	reqs := r.Requests()
	if slo.ITLPercentile > 0 { // a quantile of each request's gaps: read them back
		var err error
		if reqs, err = r.RequestsWithGaps(); err != nil {
			t.Fatalf("perftest: %v", err)
		}
	}
	v := check.Goodput(reqs, slo, minFraction, 0)
	t.Attr("perftest.goodput", fmt.Sprintf("%.4g", v.Value))
	return r.report(t, v, fatal)
}

// AssertTTFT checks that the p-quantile (p in [0, 1]; 0.99 = p99) of time to first token
// is at most max.
func (r *Result) AssertTTFT(t testing.TB, p float64, max time.Duration) bool {
	t.Helper()
	return r.bound(t, Bound{Metric: TTFT, P: p, Max: max.Seconds()}, false)
}

// RequireTTFT is AssertTTFT, then t.FailNow on a breach.
func (r *Result) RequireTTFT(t testing.TB, p float64, max time.Duration) {
	t.Helper()
	r.bound(t, Bound{Metric: TTFT, P: p, Max: max.Seconds()}, true)
}

// AssertITL checks that the p-quantile of the requests' inter-token latency (each
// request's mean gap between text chunks) is at most max.
func (r *Result) AssertITL(t testing.TB, p float64, max time.Duration) bool {
	t.Helper()
	return r.bound(t, Bound{Metric: ITL, P: p, Max: max.Seconds()}, false)
}

// RequireITL is AssertITL, then t.FailNow on a breach.
func (r *Result) RequireITL(t testing.TB, p float64, max time.Duration) {
	t.Helper()
	r.bound(t, Bound{Metric: ITL, P: p, Max: max.Seconds()}, true)
}

// AssertLatency checks that the p-quantile of request latency is at most max.
func (r *Result) AssertLatency(t testing.TB, p float64, max time.Duration) bool {
	t.Helper()
	return r.bound(t, Bound{Metric: Latency, P: p, Max: max.Seconds()}, false)
}

// RequireLatency is AssertLatency, then t.FailNow on a breach.
func (r *Result) RequireLatency(t testing.TB, p float64, max time.Duration) {
	t.Helper()
	r.bound(t, Bound{Metric: Latency, P: p, Max: max.Seconds()}, true)
}

// AssertBound checks a quantile bound on any per-request metric, e.g.
// Bound{Metric: OutputTPS, P: 0.1, Min: 20} (p10 of per-user output tokens/s >= 20).
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
	return r.each(t, b.Check(r.Requests()), fatal)
}

// AssertErrorRate checks that at most maxRate (a fraction; 0 = none) of the requests failed.
func (r *Result) AssertErrorRate(t testing.TB, maxRate float64) bool {
	t.Helper()
	return r.report(t, check.ErrorRate(r.Requests(), maxRate), false)
}

// RequireErrorRate is AssertErrorRate, then t.FailNow on a breach.
func (r *Result) RequireErrorRate(t testing.TB, maxRate float64) {
	t.Helper()
	r.report(t, check.ErrorRate(r.Requests(), maxRate), true)
}

// AssertOutputThroughput checks that the run's output token throughput (output tokens
// over the benchmark duration) is at least minTokPerSec.
func (r *Result) AssertOutputThroughput(t testing.TB, minTokPerSec float64) bool {
	t.Helper()
	return r.each(t, Objectives{MaxErrorRate: -1, MinOutputTokenThroughput: minTokPerSec}.Check(r.Requests(), r.Metrics), false)
}

// AssertRequestThroughput checks that the run's successful requests per second are at
// least minReqPerSec.
func (r *Result) AssertRequestThroughput(t testing.TB, minReqPerSec float64) bool {
	t.Helper()
	return r.each(t, Objectives{MaxErrorRate: -1, MinRequestThroughput: minReqPerSec}.Check(r.Requests(), r.Metrics), false)
}

// AssertTokenizerMatch checks that, for every successful request, the server counted
// exactly as many input tokens as the client: from the mock server's recording, or
// from usage.prompt_tokens for a real endpoint. The message lists the worst offenders.
func (r *Result) AssertTokenizerMatch(t testing.TB) bool {
	t.Helper()
	return r.report(t, check.TokenizerMatch(r.Requests(), 0), false)
}

// RequireTokenizerMatch is AssertTokenizerMatch, then t.FailNow on a mismatch.
func (r *Result) RequireTokenizerMatch(t testing.TB) {
	t.Helper()
	r.report(t, check.TokenizerMatch(r.Requests(), 0), true)
}

// AssertTokenizerMatchWithin is AssertTokenizerMatch allowing |server − client| <= tolerance tokens.
func (r *Result) AssertTokenizerMatchWithin(t testing.TB, tolerance int) bool {
	t.Helper()
	return r.report(t, check.TokenizerMatch(r.Requests(), tolerance), false)
}
