package distribution

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Mixture is a finite mixture: with probability Weights[i]/sum(Weights) a draw comes
// from Components[i]. Weights need not sum to 1. Use it for multimodal workloads (short
// chat turns plus long documents). A draw picks the component and its value with the
// mixture's Src; the components' own Src fields are not used by Mixture.Rand.
// It panics if the slices differ in length, are empty, or a weight is negative or all
// are zero.
type Mixture struct {
	Weights    []float64
	Components []Distribution
	Src        rand.Source
}

func (d Mixture) validate() error {
	if len(d.Weights) == 0 || len(d.Weights) != len(d.Components) {
		return fmt.Errorf("mix: want as many weights as components (>= 1), got %d and %d", len(d.Weights), len(d.Components))
	}
	sum := 0.0
	for i, w := range d.Weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("mix: weight %d is %g, want finite >= 0", i, w)
		}
		if d.Components[i] == nil {
			return fmt.Errorf("mix: component %d is nil", i)
		}
		sum += w
	}
	if sum == 0 {
		return errors.New("mix: weights sum to 0")
	}
	return nil
}

func (d Mixture) total() float64 {
	s := 0.0
	for _, w := range d.Weights {
		s += w
	}
	return s
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Mixture) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d Mixture) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	u := r.Float64() * d.total()
	i := 0
	for ; i < len(d.Weights)-1; i++ {
		if u < d.Weights[i] {
			break
		}
		u -= d.Weights[i]
	}
	for d.Weights[i] == 0 { // u landed on a zero-weight tail by rounding
		i--
	}
	return drawWith(d.Components[i], r)
}

// CDF returns the weighted sum of the components' CDFs.
func (d Mixture) CDF(x float64) float64 {
	mustOK(d.validate())
	s := 0.0
	for i, w := range d.Weights {
		if w > 0 {
			s += w * d.Components[i].CDF(x)
		}
	}
	return math.Min(s/d.total(), 1)
}

// Quantile inverts the CDF numerically (bisection between the components' own
// quantiles, which bracket the mixture's).
func (d Mixture) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, w := range d.Weights {
		if w > 0 {
			q := d.Components[i].Quantile(p)
			lo, hi = math.Min(lo, q), math.Max(hi, q)
		}
	}
	if p == 0 {
		return lo
	}
	if p == 1 || lo == hi {
		return hi
	}
	return bisect(d.CDF, p, lo, hi)
}

// Mean returns Σ wᵢ μᵢ / Σ wᵢ.
func (d Mixture) Mean() float64 {
	mustOK(d.validate())
	s := 0.0
	for i, w := range d.Weights {
		if w > 0 {
			s += w * d.Components[i].Mean()
		}
	}
	return s / d.total()
}

// StdDev returns the square root of Σ wᵢ (σᵢ² + μᵢ²)/Σ wᵢ - mean².
func (d Mixture) StdDev() float64 {
	m := d.Mean()
	s := 0.0
	for i, w := range d.Weights {
		if w > 0 {
			mu, sd := d.Components[i].Mean(), d.Components[i].StdDev()
			s += w * (sd*sd + (mu-m)*(mu-m))
		}
	}
	return math.Sqrt(s / d.total())
}

// String prints "mix:W1*C1+W2*C2…".
func (d Mixture) String() string {
	var b strings.Builder
	b.WriteString("mix:")
	for i, w := range d.Weights {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(fmtFloat(w))
		b.WriteByte('*')
		if i < len(d.Components) && d.Components[i] != nil {
			b.WriteString(d.Components[i].String())
		}
	}
	return b.String()
}
