package reportgen

import (
	"fmt"

	"github.com/perfgate/perfgate/distribution"
)

// twoSampleTests runs the two-sample tests of the comparison report on a and b.
func twoSampleTests(a, b []float64, alpha float64) []testRow {
	ks := distribution.KS2(a, b)
	rows := []testRow{verdictRow("Kolmogorov–Smirnov (two-sample)", fmt.Sprintf("D = %.4f", ks.Statistic), ks.PValue, alpha, ks.String(),
		"same distribution")}
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
