package run

import (
	"fmt"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/reportgen"
)

// CheckBaselineIdentity names the verdict of [BaselineIdentity].
const CheckBaselineIdentity = "baseline-identity"

// Identity returns what the run measured with as a manifest: its pins and this
// machine's facts (the host the run was measured on, for a run in memory).
func (o *Outcome) Identity() reportgen.Manifest {
	m := reportgen.Manifest{Host: reportgen.HostFacts(), Seed: o.Scenario.Seed, Scenario: o.Scenario.Name}
	if p := o.Pins; p != nil {
		m.VCS, m.Dataset, m.Servers, m.Topology = p.VCS, p.Dataset, p.Servers, p.Topology
	}
	return m
}

// ReadIdentity reads the manifest of a run's artifact directory: what a baseline
// was measured with ([gate.ReadIdentity]).
func ReadIdentity(dir string) (reportgen.Manifest, error) { return gate.ReadIdentity(dir) }

// BaselineIdentity is the verdict on a comparison's fairness: passing when
// gate.CompareIdentity found nothing, else of [check.Status] Invalid, listing the
// differences, failing under validity.ModeFail and passing (a warning) under validity.ModeWarn.
func BaselineIdentity(diffs []string, m validity.Mode) check.Verdict {
	v := check.Verdict{Check: CheckBaselineIdentity, Pass: true, Value: float64(len(diffs)), Unit: check.None}
	if len(diffs) == 0 {
		v.Summary = "baseline measured with the same dataset, server and hardware"
		return v
	}
	v.Status = check.Invalid
	v.Pass = m == validity.ModeWarn
	v.Summary = fmt.Sprintf("baseline not comparable: %d difference(s) in what was measured", len(diffs))
	for _, s := range diffs {
		v.Evidence = append(v.Evidence, check.Line{Label: "differs", Text: s})
	}
	v.Evidence = append(v.Evidence, check.Line{Label: "fix", Text: "re-measure the baseline with the same dataset (seed), server build and hardware, or accept the difference knowingly"})
	return v
}
