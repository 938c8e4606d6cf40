package distribution

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// UniformInt is the discrete uniform distribution on the integers Min..Max, both
// included. Rand returns integer-valued floats. It panics if Max < Min.
type UniformInt struct {
	Min, Max int
	Src      rand.Source
}

func (d UniformInt) validate() error {
	if d.Max < d.Min {
		return fmt.Errorf("uniformint: max %d < min %d", d.Max, d.Min)
	}
	if span := uint64(d.Max) - uint64(d.Min); span >= math.MaxInt64 {
		return fmt.Errorf("uniformint: max %d - min %d overflows int64 (the span must be < %d)", d.Max, d.Min, int64(math.MaxInt64))
	}
	return nil
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d UniformInt) Rand() float64 { return d.randWith(rng(d.Src)) }
func (d UniformInt) randWith(r *rand.Rand) float64 {
	mustOK(d.validate())
	return float64(d.Min + int(r.Int64N(int64(d.Max-d.Min)+1)))
}

// CDF returns P(X <= x).
func (d UniformInt) CDF(x float64) float64 {
	mustOK(d.validate())
	switch {
	case x < float64(d.Min):
		return 0
	case x >= float64(d.Max):
		return 1
	}
	return (math.Floor(x) - float64(d.Min) + 1) / float64(d.Max-d.Min+1)
}

// Prob returns 1/(Max-Min+1) at the integers in [Min, Max], else 0.
func (d UniformInt) Prob(x float64) float64 {
	mustOK(d.validate())
	if x != math.Trunc(x) || x < float64(d.Min) || x > float64(d.Max) {
		return 0
	}
	return 1 / float64(d.Max-d.Min+1)
}

// Quantile returns the smallest integer k with CDF(k) >= p.
func (d UniformInt) Quantile(p float64) float64 {
	checkProb(p)
	mustOK(d.validate())
	if p == 0 {
		return float64(d.Min)
	}
	n := float64(d.Max - d.Min + 1)
	k := math.Ceil(p*n) - 1
	// guard against p*n rounding up past an exact step
	if k > 0 && k/n >= p {
		k--
	}
	return float64(d.Min) + k
}

// Mean returns the mean.
func (d UniformInt) Mean() float64 { return (float64(d.Min) + float64(d.Max)) / 2 }

// StdDev returns the standard deviation.
func (d UniformInt) StdDev() float64 {
	n := float64(d.Max-d.Min) + 1
	return math.Sqrt((n*n - 1) / 12)
}

// String returns the text form that [Parse] reads.
func (d UniformInt) String() string {
	return "uniformint:" + strconv.Itoa(d.Min) + "," + strconv.Itoa(d.Max)
}

// VLLMRange is vLLM's random-dataset length rule (`--random-input-len X
// --random-range-ratio R`): a uniform integer on [floor(X(1-R)), ceil(X(1+R))], both
// ends included, the interval centred on X. vLLM draws it with numpy's
// default_rng(seed).integers; see package nprand to reproduce vLLM's exact stream.
// vLLM additionally raises the lower bound of output lengths to 1; a [Length] does the
// same (it resamples values below 1). Not to be confused with [SGLangRange].
// It panics unless Len >= 0 and 0 <= Ratio < 1.
type VLLMRange struct {
	Len   int
	Ratio float64
	Src   rand.Source
}

func (d VLLMRange) validate() error {
	if d.Len < 0 || !(d.Ratio >= 0 && d.Ratio < 1) {
		return fmt.Errorf("vllm-range: want len >= 0 and 0 <= ratio < 1, got %d, %g", d.Len, d.Ratio)
	}
	if d.Len > MaxInt {
		return fmt.Errorf("vllm-range: len %d is above the limit %d", d.Len, MaxInt)
	}
	return nil
}

// Int returns the equivalent [UniformInt].
func (d VLLMRange) Int() UniformInt {
	mustOK(d.validate())
	x := float64(d.Len)
	lo := int(math.Floor(x * (1 - d.Ratio)))
	hi := int(math.Ceil(x * (1 + d.Ratio)))
	return UniformInt{Min: lo, Max: hi, Src: d.Src}
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d VLLMRange) Rand() float64                 { return d.Int().Rand() }
func (d VLLMRange) randWith(r *rand.Rand) float64 { return d.Int().randWith(r) }

// CDF returns P(X <= x).
func (d VLLMRange) CDF(x float64) float64 { return d.Int().CDF(x) }

// Prob returns P(X = x).
func (d VLLMRange) Prob(x float64) float64 { return d.Int().Prob(x) }

// Quantile returns the inverse CDF at p; it panics unless 0 <= p <= 1.
func (d VLLMRange) Quantile(p float64) float64 { return d.Int().Quantile(p) }

// Mean returns the mean.
func (d VLLMRange) Mean() float64 { return d.Int().Mean() }

// StdDev returns the standard deviation.
func (d VLLMRange) StdDev() float64 { return d.Int().StdDev() }

// String returns the text form that [Parse] reads.
func (d VLLMRange) String() string {
	return "vllm-range:" + strconv.Itoa(d.Len) + "," + fmtFloat(d.Ratio)
}

// SGLangRange is SGLang's random-dataset length rule (`--random-input-len X
// --random-range-ratio R` in sglang.bench_serving): a uniform integer on
// [max(floor(X R), 1), X], both ends included — the interval ends at X, so its mean is
// below X, unlike [VLLMRange]. SGLang draws it with numpy's legacy np.random.randint.
// It panics unless Len >= 1 and 0 <= Ratio <= 1.
type SGLangRange struct {
	Len   int
	Ratio float64
	Src   rand.Source
}

func (d SGLangRange) validate() error {
	if d.Len < 1 || !(d.Ratio >= 0 && d.Ratio <= 1) {
		return fmt.Errorf("sglang-range: want len >= 1 and 0 <= ratio <= 1, got %d, %g", d.Len, d.Ratio)
	}
	if d.Len > MaxInt {
		return fmt.Errorf("sglang-range: len %d is above the limit %d", d.Len, MaxInt)
	}
	return nil
}

// Int returns the equivalent [UniformInt].
func (d SGLangRange) Int() UniformInt {
	mustOK(d.validate())
	lo := max(int(math.Floor(float64(d.Len)*d.Ratio)), 1)
	return UniformInt{Min: lo, Max: d.Len, Src: d.Src}
}

// Rand returns a random sample, drawn from Src (the shared default source if nil).
func (d SGLangRange) Rand() float64                 { return d.Int().Rand() }
func (d SGLangRange) randWith(r *rand.Rand) float64 { return d.Int().randWith(r) }

// CDF returns P(X <= x).
func (d SGLangRange) CDF(x float64) float64 { return d.Int().CDF(x) }

// Prob returns P(X = x).
func (d SGLangRange) Prob(x float64) float64 { return d.Int().Prob(x) }

// Quantile returns the inverse CDF at p; it panics unless 0 <= p <= 1.
func (d SGLangRange) Quantile(p float64) float64 { return d.Int().Quantile(p) }

// Mean returns the mean.
func (d SGLangRange) Mean() float64 { return d.Int().Mean() }

// StdDev returns the standard deviation.
func (d SGLangRange) StdDev() float64 { return d.Int().StdDev() }

// String returns the text form that [Parse] reads.
func (d SGLangRange) String() string {
	return "sglang-range:" + strconv.Itoa(d.Len) + "," + fmtFloat(d.Ratio)
}
