package distribution

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Empirical is the discrete distribution that puts each observed value's share of the
// weight on it: the distribution a recording's column defines. Rand resamples observed
// values (a bootstrap draw); CDF is the empirical CDF; Quantile is its generalized
// inverse (the smallest observed value whose CDF is >= p, numpy's "inverted_cdf"), so
// Quantile and Rand agree. For summary percentiles use [Percentile], which
// interpolates.
//
// Build one with [NewEmpirical] (samples), [NewEmpiricalHistogram] (values with
// counts) or [LoadEmpirical] (a numeric field of a JSONL recording). The zero value
// has no data and panics when used.
type Empirical struct {
	Src rand.Source

	x      []float64 // distinct values, ascending
	w      []float64 // weight of x[i], as given (String writes it)
	cum    []float64 // cumulative weight up to and including x[i]
	source string    // "FILE#field" when loaded from a file
}

// NewEmpirical returns the empirical distribution of samples (which it does not
// modify). It returns an error if samples is empty or holds NaN or ±Inf.
func NewEmpirical(samples []float64) (Empirical, error) {
	if len(samples) == 0 {
		return Empirical{}, errors.New("distribution: empirical: no samples")
	}
	s := slices.Clone(samples)
	sortFloats(s)
	var e Empirical
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Empirical{}, fmt.Errorf("distribution: empirical: sample %g is not finite", v)
		}
		if n := len(e.x); n > 0 && e.x[n-1] == v {
			e.cum[n-1]++
			e.w[n-1]++
			continue
		}
		e.x = append(e.x, v)
		e.cum = append(e.cum, 1)
		e.w = append(e.w, 1)
	}
	for i := 1; i < len(e.cum); i++ {
		e.cum[i] += e.cum[i-1]
	}
	return e, nil
}

// NewEmpiricalHistogram returns the distribution that puts weight counts[i] on
// values[i] (a length histogram: value → how often). Values may repeat and come in any
// order; counts must be finite, >= 0 and not all zero.
func NewEmpiricalHistogram(values, counts []float64) (Empirical, error) {
	if len(values) == 0 || len(values) != len(counts) {
		return Empirical{}, fmt.Errorf("distribution: empirical histogram: want as many counts as values (>= 1), got %d and %d", len(counts), len(values))
	}
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
		if v := values[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return Empirical{}, fmt.Errorf("distribution: empirical histogram: value %g is not finite", v)
		}
		if c := counts[i]; !(c >= 0) || math.IsInf(c, 0) {
			return Empirical{}, fmt.Errorf("distribution: empirical histogram: count %g for value %g, want finite >= 0", c, values[i])
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(values[a], values[b]) })
	var e Empirical
	total := 0.0
	for _, i := range idx {
		if counts[i] == 0 {
			continue
		}
		total += counts[i]
		if n := len(e.x); n > 0 && e.x[n-1] == values[i] {
			e.cum[n-1] = total
			e.w[n-1] += counts[i]
			continue
		}
		e.x = append(e.x, values[i])
		e.cum = append(e.cum, total)
		e.w = append(e.w, counts[i])
	}
	if total == 0 {
		return Empirical{}, errors.New("distribution: empirical histogram: all counts are zero")
	}
	if math.IsInf(total, 0) {
		return Empirical{}, fmt.Errorf("distribution: empirical histogram: the counts sum beyond %g", math.MaxFloat64)
	}
	return e, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LoadEmpirical reads a JSONL file (one JSON object per line, such as a perfgate or
// AIPerf recording) and returns the empirical distribution of its numeric field
// (e.g. "isl", "osl"). Lines where the field is absent or null are skipped; a
// non-numeric value, a malformed line or no values at all is an error. The result
// prints as "empirical:PATH#FIELD" and re-reads the file when parsed.
func LoadEmpirical(path, field string) (Empirical, error) {
	f, err := os.Open(path)
	if err != nil {
		return Empirical{}, fmt.Errorf("distribution: empirical: %w", err)
	}
	defer f.Close()
	vals, err := readColumn(f, field)
	if err != nil {
		return Empirical{}, fmt.Errorf("distribution: empirical: %s: %w", path, err)
	}
	e, err := NewEmpirical(vals)
	if err != nil {
		return Empirical{}, fmt.Errorf("distribution: empirical: %s#%s: %w", path, field, err)
	}
	e.source = path + "#" + field
	return e, nil
}

func readColumn(r io.Reader, field string) ([]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var vals []float64
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		raw, ok := obj[field]
		if !ok || string(raw) == "null" {
			continue
		}
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: field %q is %s, want a number", line, field, raw)
		}
		vals = append(vals, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("no values of field %q", field)
	}
	return vals, nil
}

func (d Empirical) validate() error {
	if len(d.x) == 0 {
		return errors.New("empirical: no data (use NewEmpirical, NewEmpiricalHistogram or LoadEmpirical)")
	}
	return nil
}

func (d Empirical) total() float64 { return d.cum[len(d.cum)-1] }

// Len returns the number of distinct values.
func (d Empirical) Len() int { return len(d.x) }

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Empirical) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d Empirical) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	u := r.Float64() * d.total()
	i, _ := slices.BinarySearch(d.cum, u)
	if i < len(d.cum) && d.cum[i] == u {
		i++ // cum[i] is the upper end of value i's share; u == cum[i] belongs to i+1
	}
	return d.x[min(i, len(d.x)-1)]
}

// CDF returns the fraction of weight on values <= x.
func (d Empirical) CDF(x float64) float64 {
	mustOK(d.validate())
	i, found := slices.BinarySearch(d.x, x)
	if found {
		return d.cum[i] / d.total()
	}
	if i == 0 {
		return 0
	}
	return d.cum[i-1] / d.total()
}

// Prob returns the fraction of weight on exactly x.
func (d Empirical) Prob(x float64) float64 {
	mustOK(d.validate())
	i, found := slices.BinarySearch(d.x, x)
	if !found {
		return 0
	}
	lo := 0.0
	if i > 0 {
		lo = d.cum[i-1]
	}
	return (d.cum[i] - lo) / d.total()
}

// Quantile returns the smallest value v with CDF(v) >= p.
func (d Empirical) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	t := p * d.total()
	i, _ := slices.BinarySearch(d.cum, t)
	return d.x[min(i, len(d.x)-1)]
}

// Mean returns the weighted mean of the values.
func (d Empirical) Mean() float64 {
	mustOK(d.validate())
	s, t := 0.0, d.total()
	for i, w := range d.w {
		s += w * d.x[i]
	}
	if !math.IsInf(s, 0) {
		return s / t
	}
	// Weights times values overflowed: sum shares instead, which stay within the
	// values' range.
	s = 0
	for i, w := range d.w {
		s += w / t * d.x[i]
	}
	return s
}

// StdDev returns the population standard deviation (divisor n) of the values.
func (d Empirical) StdDev() float64 {
	m := d.Mean()
	s := 0.0
	for i, w := range d.w {
		s += w * (d.x[i] - m) * (d.x[i] - m)
	}
	return math.Sqrt(s / d.total())
}

// String prints "empirical:PATH#FIELD" for a loaded column, else the values inline as
// "empirical:V1,V2*C2,…" (V*C = value V with weight C).
func (d Empirical) String() string {
	if d.source != "" {
		return "empirical:" + d.source
	}
	var b strings.Builder
	b.WriteString("empirical:")
	for i, w := range d.w {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(fmtFloat(d.x[i]))
		if w != 1 {
			b.WriteByte('*')
			b.WriteString(fmtFloat(w))
		}
	}
	return b.String()
}
