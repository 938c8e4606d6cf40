package run

import (
	"context"
	"path/filepath"

	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// GateRuns runs the current side of a gate: sc into dir (a series, as [RunSeries]) for
// Gate.Runs runs, compares it with baseline, and while a primary statistic is
// inconclusive adds runs to the next look of g.Schedule() (K → 2K → 4K … → MaxRuns),
// each look at its share of the family alpha (check.Schedule.Alpha; [gate.Looks]). It
// stops at the first settled look or at the cap. A baseline of another workload, or of
// an unknown one, is refused before any run. A run's error stops it and is returned
// with the result so far.
func GateRuns(ctx context.Context, sc scenario.Scenario, baseline *gate.Series, dir string, g gate.Gate, opt SeriesOptions) (gate.GateResult, error) {
	if r, refused := refuse(baseline, NewSeries(dir, sc), g); refused {
		return r, nil
	}
	return gate.Looks(g, baseline, func(look, k int, cur *gate.Series) (*gate.Series, error) {
		if cur == nil {
			cur = &gate.Series{Dir: dir}
		}
		_, err := Extend(ctx, cur, sc, k-cur.Len(), opt)
		return cur, err
	}, nil)
}

// refuse reports whether the gate refuses to compare current with baseline, before
// any run: another workload, or an unknown one.
func refuse(baseline, current *gate.Series, g gate.Gate) (gate.GateResult, bool) {
	ds := gate.WorkloadDiff(baseline, current, g.IgnoreWorkload)
	if len(ds) == 0 {
		return gate.GateResult{}, false
	}
	r := gate.GateResult{Baseline: baseline, Current: current, Workload: ds, Gate: g}
	if baseline.Workload != nil {
		r.Target = gate.Diff(baseline.Workload.Target, current.Workload.Target, nil)
	}
	return r, true
}

// Interleave runs an A/B gate: a (the baseline) and b (the candidate) alternate, A B A
// B …, into dir/a and dir/b, so drift in the machine or the server touches both sides
// alike; the runs grow by g's sequential plan as [GateRuns]'s do, and the verdict is
// gate.Compare's with A as the baseline. The two scenarios must be one workload (they
// may differ in where they send and what answers: two URLs, two mock configurations).
func Interleave(ctx context.Context, a, b scenario.Scenario, dir string, g gate.Gate, opt SeriesOptions) (gate.GateResult, error) {
	if ds := scenario.DiffWorkload(a, b, g.IgnoreWorkload...); len(ds) > 0 {
		return gate.GateResult{Baseline: NewSeries("", a), Current: NewSeries("", b), Workload: ds, Target: scenario.DiffTarget(a, b), Gate: g}, nil
	}
	a, b = serverNamed(a, "A"), serverNamed(b, "B")
	join := func(s string) string {
		if dir == "" {
			return ""
		}
		return filepath.Join(dir, s)
	}
	sa, sb := &gate.Series{Dir: join("a")}, &gate.Series{Dir: join("b")}
	sb.ShareSession(sa) // one session: A and B share its offset
	optB := opt
	return gate.Looks(g, sa, func(look, k int, _ *gate.Series) (*gate.Series, error) {
		for sb.Len() < k {
			if sa.Len() < k {
				if _, err := Extend(ctx, sa, a, 1, opt); err != nil {
					return sb, err
				}
			}
			if _, err := Extend(ctx, sb, b, 1, optB); err != nil {
				return sb, err
			}
		}
		return sb, nil
	}, func() *gate.Series { return sa })
}
