package reportgen

import (
	"fmt"

	"github.com/perfgate/perfgate/distribution"
)

// twoSampleTests runs the two-sample tests of the comparison report on a and b:
// Kolmogorov–Smirnov (any difference in distribution) and Mann–Whitney U (a shift).
func twoSampleTests(a, b []float64, alpha float64) []testRow {
	ks := distribution.KS2(a, b)
	rows := []testRow{verdictRow("Kolmogorov–Smirnov (two-sample)", fmt.Sprintf("D = %.4f", ks.Statistic), ks.PValue, alpha, ks.String(),
		"same distribution")}
	mw := distribution.MannWhitney(a, b)
	rows = append(rows, verdictRow("Mann–Whitney U", fmt.Sprintf("U = %.0f (P(A>B) = %.3f)", mw.U, mw.Effect), mw.PValue, alpha, mw.String(),
		"no shift"))
	return rows
}

func verdictRow(test, stat string, p, alpha float64, detail, null string) testRow {
	r := testRow{Test: test, Statistic: stat, PValue: fmt.Sprintf("%.4g", p), Detail: detail}
	if p < alpha {
		r.Verdict, r.Class = fmt.Sprintf("differ (p < %g)", alpha), "fail"
	} else {
		r.Verdict, r.Class = fmt.Sprintf("consistent with %s (p ≥ %g)", null, alpha), "pass"
	}
	return r
}
