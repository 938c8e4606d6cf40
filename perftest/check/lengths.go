package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/distribution"
)

// LengthFit checks that integer token lengths (the ISL the server received, or the OSL
// it generated) fit the target length distribution: it fails when the goodness-of-fit
// test rejects the fit at level alpha (0 = DefaultAlpha). The test is
// discrete-aware (the target is a [distribution.Length], whose exact probability of each
// integer is known), and the evidence shows the target and observed quantiles and a
// histogram of observed against expected counts.
func LengthFit(name string, sample []int, target distribution.Length, alpha float64) Verdict {
	const check = "length-fit"
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return invalid(check, "%s: alpha %v is outside (0, 1)", name, alpha)
	}
	if len(sample) == 0 {
		return invalid(check, "%s fits %s: no lengths recorded", name, target)
	}
	if target.Dist == nil {
		return invalid(check, "%s: no target distribution", name)
	}
	xs := make([]float64, len(sample))
	for i, k := range sample {
		xs[i] = float64(k)
	}
	stat, p, method := fitLength(sample, xs, target)
	v := Verdict{Check: check, Value: p, Unit: None, Pass: p >= alpha}
	if v.Pass {
		v.Summary = fmt.Sprintf("%s fits %s: %s, p=%s >= alpha=%g (n=%d)", name, target, stat, pvalue(p), alpha, len(sample))
	} else {
		v.Summary = fmt.Sprintf("%s does not fit %s: %s (n=%d), p=%s < alpha=%g", name, target, stat, len(sample), pvalue(p), alpha)
		if strings.Contains(stat, "cannot come from it") {
			v.Summary = fmt.Sprintf("%s does not fit %s: %s", name, target, stat)
		}
	}
	v.Evidence = append(v.Evidence, Line{"test", method})
	v.Evidence = append(v.Evidence, quantileRows(xs, target)...)
	v.Evidence = append(v.Evidence, Line{"histogram", lengthHistogram(sample, target)})
	return v
}

// fitLength runs distribution.FitLength: the Kolmogorov–Smirnov distance between the
// sample's ECDF and the target's exact CDF over the integers, with a p-value simulated
// under the target itself, so the test keeps its level on discrete data.
func fitLength(sample []int, xs []float64, target distribution.Length) (stat string, p float64, method string) {
	r := distribution.FitLength(sample, target)
	stat = fmt.Sprintf("KS D=%.3g", r.Statistic)
	method = fmt.Sprintf("%s against the exact length distribution; largest gap at %g: sample CDF %.3f, target CDF %.3f",
		r.Method, r.At, r.CDF1, r.CDF2)
	if r.Impossible > 0 {
		stat = fmt.Sprintf("%d of %d lengths cannot come from it (e.g. %g)", r.Impossible, len(sample), r.ImpossibleExample)
		method = "discrete KS against the exact length distribution: an impossible length is an outright rejection"
	}
	return stat, r.PValue, method
}

// quantileRows prints observed and target quantiles in aligned columns.
func quantileRows(xs []float64, target distribution.Length) []Line {
	ps := []float64{0.05, 0.25, 0.5, 0.75, 0.95}
	s := sorted(xs)
	var obs, tgt []string
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	head := []string{}
	for _, p := range ps {
		head = append(head, pname(p))
		obs = append(obs, sig3(quantile(s, p)))
		tgt = append(tgt, fmt.Sprint(target.Quantile(p)))
	}
	head = append(head, "mean", "std")
	obs = append(obs, sig3(mean), sig3(stddev(xs, mean)))
	tgt = append(tgt, sig3(target.Mean()), sig3(target.StdDev()))
	row := func(cells []string) string {
		var b strings.Builder
		for _, c := range cells {
			fmt.Fprintf(&b, "%8s", c)
		}
		return b.String()
	}
	return []Line{{"", row(head)}, {"observed", row(obs)}, {"target", row(tgt)}}
}

func stddev(xs []float64, mean float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += (x - mean) * (x - mean)
	}
	return math.Sqrt(s / float64(len(xs)))
}

// lengthHistogram prints observed counts against the target's expected counts over
// up to 8 bins spanning both.
func lengthHistogram(sample []int, target distribution.Length) string {
	const width = 24
	lo, hi := sample[0], sample[0]
	for _, k := range sample {
		lo, hi = min(lo, k), max(hi, k)
	}
	lo, hi = min(lo, target.Quantile(0.005)), max(hi, target.Quantile(0.995))
	bins := min(8, hi-lo+1)
	step := int(math.Ceil(float64(hi-lo+1) / float64(bins)))
	bins = (hi - lo + step) / step
	obs := make([]int, bins)
	for _, k := range sample {
		obs[(k-lo)/step]++
	}
	n := float64(len(sample))
	exp := make([]float64, bins)
	peak := 0.0
	for i := range bins {
		a, b := lo+i*step, lo+(i+1)*step-1
		exp[i] = n * (target.CDF(b) - target.CDF(a-1))
		peak = math.Max(peak, math.Max(float64(obs[i]), exp[i]))
	}
	var rows []string
	for i := range bins {
		a, b := lo+i*step, lo+(i+1)*step-1
		w := int(math.Round(float64(obs[i]) / peak * width))
		e := int(math.Round(exp[i] / peak * width))
		bar := []rune(strings.Repeat("█", w) + strings.Repeat(" ", width-w+1))
		if e < len(bar) && exp[i] >= 0.5 {
			bar[e] = '|'
		}
		label := fmt.Sprintf("[%d, %d]", a, b)
		if a == b {
			label = fmt.Sprintf("%d", a)
		}
		rows = append(rows, fmt.Sprintf("%-12s %s observed %4d  expected %6.1f", label, string(bar), obs[i], exp[i]))
	}
	return strings.Join(rows, "\n") + "\n(█ observed, | expected)"
}
