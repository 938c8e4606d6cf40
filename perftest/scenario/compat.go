package scenario

import "github.com/perfgate/perfgate/perftest/gate"

// The regression gate moved to package perftest/gate, which imports neither the mock,
// the load generator nor the tokenizer. These names stay for code written against
// them; each is removed in v0.3.0.

// Gate configures a run-level regression gate.
//
// Deprecated: use gate.Gate; removed in v0.3.0.
type Gate = gate.Gate

// GateResult is a regression gate's answer.
//
// Deprecated: use gate.GateResult; removed in v0.3.0.
type GateResult = gate.GateResult

// Series is K runs of one seeded workload.
//
// Deprecated: use gate.Series; removed in v0.3.0.
type Series = gate.Series

// RunStats are one run's run-level statistics.
//
// Deprecated: use gate.RunStats; removed in v0.3.0.
type RunStats = gate.RunStats

// Compare gates current against baseline under g.
//
// Deprecated: use gate.Compare; removed in v0.3.0.
func Compare(baseline, current *gate.Series, g gate.Gate, alpha float64) gate.GateResult {
	return gate.Compare(baseline, current, g, alpha)
}
