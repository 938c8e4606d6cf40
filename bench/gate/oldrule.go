package main

import (
	"math"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
)

// The run-level rule before sessions were modelled, kept frozen here so that the
// families table can set it beside the gate on the same pairs: every run of a side an
// independent draw (a baseline's sessions pooled), Welch's t on the logs, both ends of
// the interval at the metric's Holm level, Holm over the primary statistics, the
// sequential looks' alpha split by Bonferroni.

// oldMetric is one primary statistic's runs on both sides (logs are taken here).
type oldMetric struct {
	base, cur      []float64
	higherIsBetter bool
}

// oldFamily returns the old rule's answer for the family at one look: regressed if a
// metric's better end excludes no change at its Holm level and the ratio is worse by δ;
// otherwise inconclusive if any metric's worse end is beyond δ; otherwise no regression
// (improved counts as no regression).
func oldFamily(ms []oldMetric, alpha, margin float64) check.Change {
	type res struct {
		diff, se, df float64
		p            float64
	}
	rs := make([]res, len(ms))
	ps := make([]float64, len(ms))
	for i, m := range ms {
		w, err := distribution.Welch(logsOf(m.base), logsOf(m.cur), 0.5)
		if err != nil {
			ps[i] = 1
			rs[i] = res{p: 1, se: math.NaN()}
			continue
		}
		toward := w.Diff
		if m.higherIsBetter {
			toward = -toward
		}
		p := 1.0
		switch {
		case w.SE > 0:
			p = distribution.TSurvival(toward/w.SE, w.DF)
		case toward > 0:
			p = 0
		}
		rs[i] = res{diff: w.Diff, se: w.SE, df: w.DF, p: p}
		ps[i] = p
	}
	levels := distribution.HolmLevels(ps, alpha)
	worst := check.ChangeNoRegression
	for i, m := range ms {
		r := rs[i]
		if math.IsNaN(r.se) {
			worst = check.ChangeInconclusive
			continue
		}
		q := 0.0
		if r.se > 0 {
			q = distribution.TQuantile(1-levels[i], r.df) * r.se
		}
		d := r.diff
		ml := math.Log1p(margin)
		if m.higherIsBetter {
			d = -d
			ml = -math.Log1p(-margin)
		}
		switch {
		case d-q > 0 && d >= ml:
			return check.ChangeRegressed
		case d+q >= ml:
			worst = check.ChangeInconclusive
		}
	}
	return worst
}

func logsOf(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}
