package check

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Sample is one metric's values, one per request.
type Sample struct {
	Name   string    // what was measured, e.g. "TTFT"; printed as written
	Unit   Unit      // the values' unit
	Values []float64 // one per request; NaN values are dropped
	IDs    []string  // optional: request ids parallel to Values, for the worst list
	Notes  []string  // optional: a note per value for the worst list, e.g. "prompt 3.1k tok"
}

// clean returns the non-NaN values with their ids.
func (s Sample) clean() Sample {
	out := Sample{Name: s.Name, Unit: s.Unit}
	for i, v := range s.Values {
		if math.IsNaN(v) {
			continue
		}
		out.Values = append(out.Values, v)
		if i < len(s.Notes) {
			out.Notes = append(out.Notes, s.Notes[i])
		}
		if i < len(s.IDs) {
			out.IDs = append(out.IDs, s.IDs[i])
		} else {
			out.IDs = append(out.IDs, fmt.Sprintf("%d", i))
		}
	}
	return out
}

// SummaryLevels are the quantiles printed as evidence.
var SummaryLevels = []float64{0.5, 0.9, 0.95, 0.99}

// quantileLine prints "p50=88ms  p90=201ms  …  max=1.91s".
func quantileLine(xs []float64, u Unit) string {
	s := sorted(xs)
	var parts []string
	for _, p := range SummaryLevels {
		parts = append(parts, pname(p)+"="+u.Format(quantile(s, p)))
	}
	parts = append(parts, "max="+u.Format(s[len(s)-1]))
	return strings.Join(parts, "  ")
}

// worst lists the k largest (or, with low, smallest) values with their ids.
func worst(s Sample, k int, low bool) string {
	idx := make([]int, len(s.Values))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if low {
			return cmp.Compare(s.Values[a], s.Values[b])
		}
		return cmp.Compare(s.Values[b], s.Values[a])
	})
	var parts []string
	sep := "  "
	for _, i := range idx[:min(k, len(idx))] {
		p := "#" + s.IDs[i] + " " + s.Unit.Format(s.Values[i])
		if i < len(s.Notes) && s.Notes[i] != "" {
			p += " (" + s.Notes[i] + ")"
			sep = "\n" // annotated entries, one per line
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, sep)
}

// QuantileAtMost checks that the p-quantile of s is at most limit (in s.Unit), e.g.
// TTFT p99 <= 0.200 s. p is in [0, 1]; 1 means the maximum.
func QuantileAtMost(s Sample, p, limit float64) Verdict { return quantileBound(s, p, limit, true) }

// QuantileAtLeast checks that the p-quantile of s is at least limit, e.g. a per-request
// output throughput p10 >= 20 tok/s.
func QuantileAtLeast(s Sample, p, limit float64) Verdict { return quantileBound(s, p, limit, false) }

func quantileBound(s Sample, p, limit float64, atMost bool) Verdict {
	const name = "quantile"
	s = s.clean()
	op, bad := "<=", ">"
	if !atMost {
		op, bad = ">=", "<"
	}
	label := s.Name + " " + pname(p)
	if p < 0 || p > 1 || math.IsNaN(p) {
		return invalid(name, "%s: quantile level %v is outside [0, 1]", s.Name, p)
	}
	if len(s.Values) == 0 {
		return invalid(name, "%s %s %s: no values (every request failed or none ran)", label, op, s.Unit.Format(limit))
	}
	got := quantile(sorted(s.Values), p)
	v := Verdict{Check: name, Value: got, Unit: s.Unit}
	v.Pass = got <= limit
	if !atMost {
		v.Pass = got >= limit
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("%s = %s %s %s", label, s.Unit.Format(got), op, s.Unit.Format(limit))
	} else {
		v.Summary = fmt.Sprintf("%s = %s, want %s %s", label, s.Unit.Format(got), op, s.Unit.Format(limit))
	}
	n := len(s.Values)
	beyond := 0
	for _, x := range s.Values {
		if (atMost && x > limit) || (!atMost && x < limit) {
			beyond++
		}
	}
	v.Evidence = []Line{
		{"quantiles", quantileLine(s.Values, s.Unit) + fmt.Sprintf("   (n=%d, numpy linear)", n)},
		{"beyond", fmt.Sprintf("%d of %d requests %s %s (%s)", beyond, n, bad, s.Unit.Format(limit), pct(float64(beyond)/float64(n)))},
	}
	if iv := quantileInterval(sorted(s.Values), p, s.Unit); iv != "" {
		v.Evidence = append(v.Evidence, Line{"interval", iv})
	}
	if !v.Pass {
		v.Evidence = append(v.Evidence, Line{"worst", worst(s, min(5, max(1, beyond)), !atMost)})
	}
	if p > 0 && p < 1 && float64(n)*(1-p) < 1 && atMost || p > 0 && p < 1 && float64(n)*p < 1 && !atMost {
		v.Evidence = append(v.Evidence, Line{"note", fmt.Sprintf("n=%d is too small to estimate %s: it is interpolated from the extreme values", n, pname(p))})
	}
	return v
}

// ThroughputAtLeast checks a run-level rate (tokens/s, requests/s) against a floor.
// Extra evidence lines (duration, request count) are printed as given.
func ThroughputAtLeast(name string, u Unit, got, floor float64, evidence ...Line) Verdict {
	v := Verdict{Check: "throughput", Value: got, Unit: u, Pass: got >= floor, Evidence: evidence}
	if math.IsNaN(got) {
		return invalid("throughput", "%s >= %s: not measured", name, u.Format(floor))
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("%s = %s >= %s", name, u.Format(got), u.Format(floor))
	} else {
		v.Summary = fmt.Sprintf("%s = %s, want >= %s (%s short)", name, u.Format(got), u.Format(floor), pct(1-got/floor))
	}
	return v
}

// Completed checks that at least one of reqs succeeded: a run that measured nothing,
// or whose every request failed, proves nothing about the server and must not pass a
// gate whatever its other objectives say.
func Completed(reqs []Request) Verdict {
	const name = "completed"
	ok := 0
	first := ""
	for _, r := range reqs {
		if r.Err == "" {
			ok++
		} else if first == "" {
			first = "#" + r.ID + " " + r.Err
		}
	}
	v := Verdict{Check: name, Value: float64(ok), Unit: None, Pass: ok > 0}
	switch {
	case len(reqs) == 0:
		v.Summary = "no request was completed: nothing was measured"
	case ok == 0:
		v.Summary = fmt.Sprintf("no request succeeded: all %d failed", len(reqs))
		v.Evidence = []Line{{"first error", first}}
	default:
		v.Summary = fmt.Sprintf("%d of %d requests succeeded", ok, len(reqs))
	}
	return v
}

// ErrorRate checks that the fraction of failed requests is at most maxRate (0 = no
// error allowed). Evidence counts the failures by kind (the text before the first
// ": ", such as http_status or timeout), with the first request and message of each.
func ErrorRate(reqs []Request, maxRate float64) Verdict {
	const name = "error-rate"
	if len(reqs) == 0 {
		return invalid(name, "error rate <= %s: no requests", pct(maxRate))
	}
	// Errors are counted by kind (the text before the first ": ", e.g. http_status),
	// each with its first request and message as the example.
	kinds := map[string]int{}
	var firstIDs, examples = map[string]string{}, map[string]string{}
	n := 0
	for _, r := range reqs {
		if r.Err != "" {
			n++
			k, msg, _ := strings.Cut(r.Err, ": ")
			if kinds[k] == 0 {
				if len(msg) > 120 {
					msg = msg[:120] + "…"
				}
				firstIDs[k], examples[k] = r.ID, msg
			}
			kinds[k]++
		}
	}
	rate := float64(n) / float64(len(reqs))
	v := Verdict{Check: name, Value: rate, Unit: Fraction, Pass: rate <= maxRate}
	if v.Pass {
		v.Summary = fmt.Sprintf("error rate = %s (%d of %d) <= %s", pct(rate), n, len(reqs), pct(maxRate))
	} else {
		want := "<= " + pct(maxRate)
		if maxRate == 0 {
			want = "none"
		}
		v.Summary = fmt.Sprintf("error rate = %s (%d of %d requests failed), want %s", pct(rate), n, len(reqs), want)
	}
	type kc struct {
		k string
		c int
	}
	var ks []kc
	for k, c := range kinds {
		ks = append(ks, kc{k, c})
	}
	slices.SortFunc(ks, func(a, b kc) int {
		if a.c != b.c {
			return b.c - a.c
		}
		return strings.Compare(a.k, b.k)
	})
	for i, e := range ks[:min(3, len(ks))] {
		label := ""
		if i == 0 {
			label = "errors"
		}
		ex := ""
		if examples[e.k] != "" {
			ex = ": " + examples[e.k]
		}
		v.Evidence = append(v.Evidence, Line{label, fmt.Sprintf("%d× %s (first: #%s%s)", e.c, e.k, firstIDs[e.k], ex)})
	}
	return v
}
