package distribution

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Fixed is the degenerate distribution at Value: every draw is Value. Src is accepted
// for uniformity with the other samplers and never read.
type Fixed struct {
	Value float64
	Src   rand.Source
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Fixed) Rand() float64               { return d.Value }
func (d Fixed) randWith(*rand.Rand) float64 { return d.Value }

// Mean returns the mean.
func (d Fixed) Mean() float64 { return d.Value }

// StdDev returns the standard deviation.
func (d Fixed) StdDev() float64 { return 0 }

// String returns the text form that [Parse] reads.
func (d Fixed) String() string  { return "fixed:" + fmtFloat(d.Value) }
func (d Fixed) validate() error { return finite("fixed value", d.Value) }

// Quantile returns the inverse CDF at p; it panics unless 0 <= p <= 1.
func (d Fixed) Quantile(p float64) float64 { checkProb(p); return d.Value }

// CDF returns 1 for x >= Value, else 0.
func (d Fixed) CDF(x float64) float64 {
	if x >= d.Value {
		return 1
	}
	return 0
}

// Prob returns 1 at Value, else 0.
func (d Fixed) Prob(x float64) float64 {
	if x == d.Value {
		return 1
	}
	return 0
}

// Uniform is the continuous uniform distribution on [Min, Max). Min == Max is allowed
// (every draw is Min). It panics if Max < Min.
type Uniform struct {
	Min, Max float64
	Src      rand.Source
}

func (d Uniform) validate() error {
	if err := finite("uniform bounds", d.Min, d.Max); err != nil {
		return err
	}
	if d.Max < d.Min {
		return fmt.Errorf("uniform: max %g < min %g", d.Max, d.Min)
	}
	if math.IsInf(d.Max-d.Min, 0) {
		return fmt.Errorf("uniform: max %g - min %g overflows float64 (the width must be <= %g)", d.Max, d.Min, math.MaxFloat64)
	}
	return nil
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Uniform) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d Uniform) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	return d.Min + (d.Max-d.Min)*r.Float64()
}

// CDF returns P(X <= x).
func (d Uniform) CDF(x float64) float64 {
	mustOK(d.validate())
	switch {
	case x < d.Min:
		return 0
	case x >= d.Max:
		return 1
	}
	return (x - d.Min) / (d.Max - d.Min)
}

// Quantile returns Min + p (Max - Min).
func (d Uniform) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	return d.Min + p*(d.Max-d.Min)
}

// Mean returns the mean.
func (d Uniform) Mean() float64 { return (d.Min + d.Max) / 2 }

// StdDev returns the standard deviation.
func (d Uniform) StdDev() float64 { return (d.Max - d.Min) / math.Sqrt(12) }

// String returns the text form that [Parse] reads.
func (d Uniform) String() string { return "uniform:" + fmtFloat(d.Min) + "," + fmtFloat(d.Max) }

// Normal is the normal (Gaussian) distribution with mean Mu and standard deviation Sigma.
// Sigma = 0 is the point mass at Mu. It panics if Sigma < 0.
type Normal struct {
	Mu, Sigma float64
	Src       rand.Source
}

func (d Normal) validate() error {
	if err := finite("normal parameters", d.Mu, d.Sigma); err != nil {
		return err
	}
	if d.Sigma < 0 {
		return fmt.Errorf("normal: sigma %g < 0", d.Sigma)
	}
	return nil
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Normal) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d Normal) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	return d.Mu + d.Sigma*r.NormFloat64()
}

// CDF returns P(X <= x).
func (d Normal) CDF(x float64) float64 {
	mustOK(d.validate())
	if d.Sigma == 0 {
		return Fixed{Value: d.Mu}.CDF(x)
	}
	return 0.5 * math.Erfc(-(x-d.Mu)/(d.Sigma*math.Sqrt2))
}

// Quantile returns the inverse CDF; ±Inf at p = 0 and 1.
func (d Normal) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	if d.Sigma == 0 {
		return d.Mu // a point mass: 0 × ∞ would be NaN at p = 0 and 1
	}
	return d.Mu + d.Sigma*stdNormalQuantile(p)
}

// Mean returns the mean.
func (d Normal) Mean() float64 { return d.Mu }

// StdDev returns the standard deviation.
func (d Normal) StdDev() float64 { return d.Sigma }

// String returns the text form that [Parse] reads.
func (d Normal) String() string { return "normal:" + fmtFloat(d.Mu) + "," + fmtFloat(d.Sigma) }

func stdNormalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// LogNormal is the distribution of exp(N(Mu, Sigma²)). Users usually know the mean and
// standard deviation of the lengths instead: [LogNormalFromMeanStd] converts, and the
// value it returns prints in that form. It panics if Sigma < 0.
type LogNormal struct {
	Mu, Sigma float64
	Src       rand.Source

	// set by LogNormalFromMeanStd, so String can print the form the user wrote as long
	// as Mu and Sigma are unchanged.
	mean, std, fromMu, fromSigma float64
}

// LogNormalFromMeanStd returns the log-normal distribution whose mean and standard
// deviation are mean and std (in the units of the samples):
// Sigma² = ln(1 + std²/mean²), Mu = ln(mean) - Sigma²/2.
// It panics unless mean > 0 and std >= 0.
func LogNormalFromMeanStd(mean, std float64) LogNormal {
	if !(mean > 0) || !(std >= 0) || math.IsInf(mean, 0) || math.IsInf(std, 0) {
		panic(fmt.Sprintf("distribution: lognormal mean %g must be > 0 and stddev %g >= 0", mean, std))
	}
	s2 := math.Log1p(std * std / (mean * mean))
	mu := math.Log(mean) - s2/2
	sigma := math.Sqrt(s2)
	return LogNormal{Mu: mu, Sigma: sigma, mean: mean, std: std, fromMu: mu, fromSigma: sigma}
}

func (d LogNormal) validate() error {
	if err := finite("lognormal parameters", d.Mu, d.Sigma); err != nil {
		return err
	}
	if d.Sigma < 0 {
		return fmt.Errorf("lognormal: sigma %g < 0", d.Sigma)
	}
	return nil
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d LogNormal) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d LogNormal) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	return math.Exp(d.Mu + d.Sigma*r.NormFloat64())
}

// CDF returns P(X <= x).
func (d LogNormal) CDF(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 0
	}
	return Normal{Mu: d.Mu, Sigma: d.Sigma}.CDF(math.Log(x))
}

// Quantile returns exp(Mu + Sigma Φ⁻¹(p)).
func (d LogNormal) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	if d.Sigma == 0 {
		return math.Exp(d.Mu) // a point mass: 0 × ∞ would be NaN at p = 0 and 1
	}
	return math.Exp(d.Mu + d.Sigma*stdNormalQuantile(p))
}

// Mean returns the mean.
func (d LogNormal) Mean() float64 { return math.Exp(d.Mu + d.Sigma*d.Sigma/2) }

// StdDev returns the standard deviation.
func (d LogNormal) StdDev() float64 {
	return math.Sqrt(math.Expm1(d.Sigma*d.Sigma)) * d.Mean()
}

// String prints "lognormal:mean=M,stddev=S" for a value made by LogNormalFromMeanStd,
// else "lognormal:MU,SIGMA".
func (d LogNormal) String() string {
	if d.mean > 0 && d.Mu == d.fromMu && d.Sigma == d.fromSigma {
		return "lognormal:mean=" + fmtFloat(d.mean) + ",stddev=" + fmtFloat(d.std)
	}
	return "lognormal:" + fmtFloat(d.Mu) + "," + fmtFloat(d.Sigma)
}

// Exponential is the exponential distribution with rate Rate (mean 1/Rate): the gaps
// of a Poisson arrival process at Rate per second. It panics unless Rate > 0.
type Exponential struct {
	Rate float64
	Src  rand.Source
}

func (d Exponential) validate() error {
	if err := finite("exponential rate", d.Rate); err != nil {
		return err
	}
	if !(d.Rate > 0) {
		return fmt.Errorf("exponential: rate %g must be > 0", d.Rate)
	}
	return nil
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Exponential) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d Exponential) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	return r.ExpFloat64() / d.Rate
}

// CDF returns 1 - exp(-Rate x) for x >= 0.
func (d Exponential) CDF(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 0
	}
	return -math.Expm1(-d.Rate * x)
}

// Quantile returns -ln(1-p)/Rate.
func (d Exponential) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	return -math.Log1p(-p) / d.Rate
}

// Mean returns the mean.
func (d Exponential) Mean() float64 { return 1 / d.Rate }

// StdDev returns the standard deviation.
func (d Exponential) StdDev() float64 { return 1 / d.Rate }

// String returns the text form that [Parse] reads.
func (d Exponential) String() string { return "exponential:" + fmtFloat(d.Rate) }

// Gamma is the gamma distribution with shape Shape (k) and rate Rate (1/scale), mean
// Shape/Rate. vLLM's bursty arrivals at request rate λ with burstiness b are
// Gamma{Shape: b, Rate: λ b}; Shape = 1 is the Poisson process. It panics unless both
// are > 0.
type Gamma struct {
	Shape, Rate float64
	Src         rand.Source
}

func (d Gamma) validate() error {
	if err := finite("gamma parameters", d.Shape, d.Rate); err != nil {
		return err
	}
	if !(d.Shape > 0) || !(d.Rate > 0) {
		return fmt.Errorf("gamma: shape %g and rate %g must be > 0", d.Shape, d.Rate)
	}
	return nil
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d Gamma) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d Gamma) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	return distuv.Gamma{Alpha: d.Shape, Beta: d.Rate, Src: r}.Rand()
}

// CDF returns the regularized lower incomplete gamma function P(Shape, Rate x).
func (d Gamma) CDF(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 0
	}
	return mathext.GammaIncReg(d.Shape, d.Rate*x)
}

// Quantile returns the inverse CDF.
func (d Gamma) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	return mathext.GammaIncRegInv(d.Shape, p) / d.Rate
}

// Mean returns the mean.
func (d Gamma) Mean() float64 { return d.Shape / d.Rate }

// StdDev returns the standard deviation.
func (d Gamma) StdDev() float64 { return math.Sqrt(d.Shape) / d.Rate }

// String returns the text form that [Parse] reads.
func (d Gamma) String() string { return "gamma:" + fmtFloat(d.Shape) + "," + fmtFloat(d.Rate) }

type validator interface{ validate() error }

// mustOK panics with a validation error: invalid parameters in a struct literal are a
// programmer error. (It takes the error, not the value, so no value is boxed on the
// sampling path.)
func mustOK(err error) {
	if err != nil {
		panic("distribution: " + err.Error())
	}
}

func finite(what string, xs ...float64) error {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s must be finite, got %g", what, x)
		}
	}
	return nil
}

// Survival returns P(X > x).
func (d Uniform) Survival(x float64) float64 { return 1 - d.CDF(x) }

// Survival returns P(X > x), accurate in the upper tail.
func (d Normal) Survival(x float64) float64 {
	mustOK(d.validate())
	if d.Sigma == 0 {
		return 1 - Fixed{Value: d.Mu}.CDF(x)
	}
	return 0.5 * math.Erfc((x-d.Mu)/(d.Sigma*math.Sqrt2))
}

// Survival returns P(X > x), accurate in the upper tail.
func (d LogNormal) Survival(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 1
	}
	return Normal{Mu: d.Mu, Sigma: d.Sigma}.Survival(math.Log(x))
}

// Survival returns exp(-Rate x) for x >= 0.
func (d Exponential) Survival(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 1
	}
	return math.Exp(-d.Rate * x)
}

// LogSurvival returns ln P(X > x) = -Rate x, exact far into the tail.
func (d Exponential) LogSurvival(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 0
	}
	return -d.Rate * x
}

// Survival returns the regularized upper incomplete gamma function Q(Shape, Rate x).
func (d Gamma) Survival(x float64) float64 {
	mustOK(d.validate())
	if x <= 0 {
		return 1
	}
	return mathext.GammaIncRegComp(d.Shape, d.Rate*x)
}
