package check

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// DefaultConfidence is the confidence of the interval a goodput check uses when none is
// given.
const DefaultConfidence = 0.95

// Goodput checks that the fraction of requests meeting slo is at least minFraction, and
// does so with confidence: it passes only if the lower end of the two-sided Wilson score
// interval at the given confidence (0 = [DefaultConfidence]) is at least minFraction. So
// 20 good requests out of 20 do not prove a goodput of 95% (their 95% Wilson lower
// bound is 83.9%), while 200 out of 200 do (98.1%).
func Goodput(reqs []Request, slo SLO, minFraction, confidence float64) Verdict {
	const name = "goodput"
	if confidence == 0 {
		confidence = DefaultConfidence
	}
	if confidence <= 0 || confidence >= 1 || math.IsNaN(confidence) {
		return invalid(name, "goodput: confidence %v is outside (0, 1)", confidence)
	}
	if minFraction < 0 || minFraction > 1 || math.IsNaN(minFraction) {
		return invalid(name, "goodput: minimum fraction %v is outside [0, 1]", minFraction)
	}
	if len(reqs) == 0 {
		return invalid(name, "goodput >= %s: no requests", pct(minFraction))
	}
	good := 0
	missed := map[string]int{}
	type bad struct {
		r    Request
		miss []string
		how  float64 // how far over its worst bound, as a ratio
	}
	var bads []bad
	for _, r := range reqs {
		q := r.Metric()
		m := slo.Miss(&q)
		if m == nil {
			good++
			continue
		}
		for _, k := range m {
			missed[k]++
		}
		b := bad{r: r, miss: m, how: -1} // failed requests are listed after slow ones
		if r.Err == "" {
			if slo.TTFT > 0 {
				b.how = max(b.how, r.TTFT/slo.TTFT.Seconds())
			}
			if slo.ITL > 0 {
				b.how = max(b.how, r.ITL(slo.ITLPercentile)/slo.ITL.Seconds())
			}
			if slo.Latency > 0 {
				b.how = max(b.how, r.Latency/slo.Latency.Seconds())
			}
		}
		bads = append(bads, b)
	}
	n := len(reqs)
	frac := float64(good) / float64(n)
	lo, hi := wilson(good, n, confidence)
	v := Verdict{Check: name, Value: frac, Unit: Fraction, Pass: lo >= minFraction}
	conf := pct(confidence)
	switch {
	case v.Pass:
		v.Summary = fmt.Sprintf("goodput = %s (%d of %d good) >= %s with %s confidence (Wilson lower bound %s)",
			pct(frac), good, n, pct(minFraction), conf, pct(lo))
	case frac >= minFraction:
		v.Summary = fmt.Sprintf("goodput = %s (%d of %d good), want >= %s with %s confidence, but the Wilson lower bound is %s: too few requests to tell",
			pct(frac), good, n, pct(minFraction), conf, pct(lo))
	default:
		v.Summary = fmt.Sprintf("goodput = %s (%d of %d good), want >= %s (Wilson %s interval %s–%s)",
			pct(frac), good, n, pct(minFraction), conf, pct(lo), pct(hi))
	}
	v.Evidence = []Line{{"slo", slo.String()}}
	if len(missed) > 0 {
		var parts []string
		for _, k := range []string{"error", "TTFT", "ITL", "latency"} {
			if missed[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, missed[k]))
			}
		}
		v.Evidence = append(v.Evidence, Line{"missed", strings.Join(parts, "  ") + "   (a request can miss several)"})
	}
	if frac >= minFraction && !v.Pass {
		need := requiredN(minFraction, confidence, frac)
		if need > 0 {
			v.Evidence = append(v.Evidence, Line{"hint", fmt.Sprintf("at this goodput, about %d requests are needed to show >= %s", need, pct(minFraction))})
		}
	}
	if !v.Pass && len(bads) > 0 {
		slices.SortStableFunc(bads, func(a, b bad) int {
			if a.how == b.how {
				return 0
			}
			if a.how > b.how {
				return -1
			}
			return 1
		})
		var lines []string
		for _, b := range bads[:min(3, len(bads))] {
			if b.r.Err != "" {
				lines = append(lines, fmt.Sprintf("#%s error: %s", b.r.ID, b.r.Err))
				continue
			}
			lines = append(lines, fmt.Sprintf("#%s TTFT=%s ITL=%s latency=%s (missed %s)", b.r.ID,
				Seconds.Format(b.r.TTFT), Seconds.Format(b.r.ITL(slo.ITLPercentile)), Seconds.Format(b.r.Latency), strings.Join(b.miss, ", ")))
		}
		v.Evidence = append(v.Evidence, Line{"worst", strings.Join(lines, "\n")})
	}
	return v
}

// requiredN returns the smallest n (up to 10^6) at which a goodput of frac gives a Wilson
// lower bound of at least minFraction; 0 if none.
func requiredN(minFraction, confidence, frac float64) int {
	if frac < minFraction || frac == 0 {
		return 0
	}
	for n := 10; n <= 1_000_000; n = n * 5 / 4 {
		if lo, _ := wilson(int(math.Round(frac*float64(n))), n, confidence); lo >= minFraction {
			return n
		}
	}
	return 0
}
