package distribution

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// forms documents each text form; Parse quotes the one for the name it saw.
var forms = map[string]string{
	"fixed":        "fixed:VALUE (e.g. fixed:128)",
	"uniform":      "uniform:MIN,MAX (e.g. uniform:100,200)",
	"uniformint":   "uniformint:MIN,MAX (integers, both included; e.g. uniformint:100,200)",
	"normal":       "normal:MU,SIGMA (e.g. normal:128,20)",
	"lognormal":    "lognormal:MU,SIGMA or lognormal:mean=M,stddev=S (e.g. lognormal:mean=512,stddev=128)",
	"exponential":  "exponential:RATE or exponential:mean=M (e.g. exponential:20)",
	"gamma":        "gamma:SHAPE,RATE (e.g. gamma:0.5,10)",
	"mix":          "mix:W1*DIST1+W2*DIST2… (e.g. mix:0.7*normal:128,10+0.3*normal:1024,50)",
	"empirical":    "empirical:FILE.jsonl#FIELD or empirical:V1,V2,… (e.g. empirical:run.jsonl#isl)",
	"vllm-range":   "vllm-range:LEN,RATIO (uniform integer on [floor(LEN(1-RATIO)), ceil(LEN(1+RATIO))]; e.g. vllm-range:1024,0.5)",
	"sglang-range": "sglang-range:LEN,RATIO (uniform integer on [max(floor(LEN RATIO),1), LEN]; e.g. sglang-range:1024,0.5)",
}

const formList = "fixed, uniform, uniformint, normal, lognormal, exponential, gamma, mix, empirical, vllm-range, sglang-range"

// Parse reads the text form of a distribution, as printed by its String method:
//
//	fixed:128            (a bare number such as 128 also means fixed:128)
//	uniform:100,200      uniformint:100,200
//	normal:128,20        lognormal:6.2,0.25   lognormal:mean=512,stddev=128
//	exponential:20       exponential:mean=0.05   gamma:0.5,10   (shape, rate)
//	mix:0.7*normal:128,10+0.3*normal:1024,50
//	empirical:run.jsonl#isl                   empirical:100,200*3,300
//	vllm-range:1024,0.5  sglang-range:1024,0.5
//
// Parameters may also be given by name (normal:mu=128,sigma=20; gamma:shape=2,rate=10,
// or scale=S instead of rate). empirical:FILE#FIELD reads the file now (see
// [LoadEmpirical]). Bad text yields an error that quotes it and names the expected form.
func Parse(text string) (Distribution, error) {
	d, err := parse(strings.TrimSpace(text), true)
	if err != nil {
		return nil, fmt.Errorf("distribution: cannot parse %q: %w", text, err)
	}
	return d, nil
}

// ParseSpec parses text with [Parse] into a [Spec], the type configuration structs
// (scenarios, mock and load-generator configs) hold: ParseSpec("normal:512,64"). Empty
// text gives the zero Spec ("unset").
func ParseSpec(text string) (Spec, error) {
	var s Spec
	err := s.UnmarshalText([]byte(text))
	return s, err
}

// MustSpec is like [ParseSpec] but panics on error, with the parse error as the
// message; for struct literals in tests and package-level values:
//
//	ISL: distribution.MustSpec("normal:512,64")
func MustSpec(text string) Spec {
	s, err := ParseSpec(text)
	if err != nil {
		panic(err)
	}
	return s
}

// MustParse is like Parse but panics on error; for tests and package-level values.
func MustParse(text string) Distribution {
	d, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return d
}

type formError struct{ name, msg string }

func (e formError) Error() string {
	f, ok := forms[e.name]
	if !ok {
		return e.msg + "; want one of " + formList
	}
	if e.msg == "" {
		return "want " + f
	}
	return e.msg + "; want " + f
}

func parse(text string, top bool) (Distribution, error) {
	if v, err := strconv.ParseFloat(text, 64); err == nil {
		d := Fixed{Value: v}
		return d, d.validate()
	}
	name, args, ok := strings.Cut(text, ":")
	if !ok {
		return nil, formError{msg: "no NAME: prefix"}
	}
	name = strings.ToLower(strings.TrimSpace(name))
	args = strings.TrimSpace(args)
	fail := func(msg string) error { return formError{name: name, msg: msg} }
	switch name {
	case "mix", "mixture":
		name = "mix"
		if !top {
			return nil, fail("mixtures cannot nest")
		}
		return parseMix(args, fail)
	case "empirical":
		return parseEmpirical(args, fail)
	}
	spec, ok := paramNames[name]
	if !ok {
		return nil, formError{msg: fmt.Sprintf("unknown distribution %q", name)}
	}
	vals, err := parseArgs(args, spec, fail)
	if err != nil {
		return nil, err
	}
	var d Distribution
	switch name {
	case "fixed":
		d = Fixed{Value: vals["value"]}
	case "uniform":
		d = Uniform{Min: vals["min"], Max: vals["max"]}
	case "uniformint":
		lo, err1 := toInt(vals["min"])
		hi, err2 := toInt(vals["max"])
		if err1 != nil || err2 != nil {
			return nil, fail(fmt.Sprintf("bounds must be integers within ±%d", MaxInt))
		}
		d = UniformInt{Min: lo, Max: hi}
	case "normal":
		d = Normal{Mu: vals["mu"], Sigma: vals["sigma"]}
	case "lognormal":
		_, hasMean := vals["mean"]
		_, hasStd := vals["stddev"]
		_, hasMu := vals["mu"]
		_, hasSigma := vals["sigma"]
		switch {
		case hasMean && hasStd && !hasMu && !hasSigma:
			if !(vals["mean"] > 0) || !(vals["stddev"] >= 0) {
				return nil, fail("mean must be > 0 and stddev >= 0")
			}
			d = LogNormalFromMeanStd(vals["mean"], vals["stddev"])
		case hasMu && hasSigma && !hasMean && !hasStd:
			d = LogNormal{Mu: vals["mu"], Sigma: vals["sigma"]}
		default:
			return nil, fail("give either mu and sigma or mean and stddev")
		}
	case "exponential":
		_, hasRate := vals["rate"]
		m, hasMean := vals["mean"]
		switch {
		case hasRate && !hasMean:
			d = Exponential{Rate: vals["rate"]}
		case hasMean && !hasRate && m > 0:
			d = Exponential{Rate: 1 / m}
		default:
			return nil, fail("give either rate or mean (> 0)")
		}
	case "gamma":
		_, hasRate := vals["rate"]
		_, hasScale := vals["scale"]
		switch {
		case hasRate && !hasScale:
			d = Gamma{Shape: vals["shape"], Rate: vals["rate"]}
		case hasScale && !hasRate && vals["scale"] > 0:
			d = Gamma{Shape: vals["shape"], Rate: 1 / vals["scale"]}
		default:
			return nil, fail("give shape and either rate or scale (> 0)")
		}
	case "vllm-range", "sglang-range":
		n, err := toInt(vals["len"])
		if err != nil {
			return nil, fail(fmt.Sprintf("len must be an integer within ±%d", MaxInt))
		}
		if name == "vllm-range" {
			d = VLLMRange{Len: n, Ratio: vals["ratio"]}
		} else {
			d = SGLangRange{Len: n, Ratio: vals["ratio"]}
		}
	}
	if err := d.(validator).validate(); err != nil {
		return nil, fail(err.Error())
	}
	return d, nil
}

type params struct {
	positional []string // names in positional order
	optional   []string // names accepted only as key=value
}

var paramNames = map[string]params{
	"fixed":        {positional: []string{"value"}},
	"uniform":      {positional: []string{"min", "max"}},
	"uniformint":   {positional: []string{"min", "max"}},
	"normal":       {positional: []string{"mu", "sigma"}},
	"lognormal":    {positional: []string{"mu", "sigma"}, optional: []string{"mean", "stddev"}},
	"exponential":  {positional: []string{"rate"}, optional: []string{"mean"}},
	"gamma":        {positional: []string{"shape", "rate"}, optional: []string{"scale"}},
	"vllm-range":   {positional: []string{"len", "ratio"}},
	"sglang-range": {positional: []string{"len", "ratio"}},
}

func parseArgs(args string, spec params, fail func(string) error) (map[string]float64, error) {
	vals := map[string]float64{}
	if args == "" {
		return nil, fail("missing parameters")
	}
	named := false
	for i, a := range strings.Split(args, ",") {
		a = strings.TrimSpace(a)
		key := ""
		if k, v, ok := strings.Cut(a, "="); ok {
			key, a, named = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v), true
			if !contains(spec.positional, key) && !contains(spec.optional, key) {
				return nil, fail(fmt.Sprintf("unknown parameter %q", key))
			}
		} else {
			if named {
				return nil, fail("positional parameter after a named one")
			}
			if i >= len(spec.positional) {
				return nil, fail("too many parameters")
			}
			key = spec.positional[i]
		}
		if _, dup := vals[key]; dup {
			return nil, fail(fmt.Sprintf("parameter %q given twice", key))
		}
		v, err := parseFinite(a)
		if err != nil {
			return nil, fail(fmt.Sprintf("%s %q %v", key, a, err))
		}
		vals[key] = v
	}
	if !named {
		if len(vals) != len(spec.positional) {
			return nil, fail(fmt.Sprintf("want %d parameters, got %d", len(spec.positional), len(vals)))
		}
	} else {
		// every positional name must be present unless an optional alternative replaces it
		for _, k := range spec.positional {
			if _, ok := vals[k]; !ok && len(spec.optional) == 0 {
				return nil, fail(fmt.Sprintf("missing parameter %q", k))
			}
		}
	}
	return vals, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// parseFinite reads a parameter: a number that is not infinite, NaN or beyond
// float64's range (which strconv rounds to infinity).
func parseFinite(text string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("is out of range (|x| <= %g)", math.MaxFloat64)
	case err != nil:
		return 0, errors.New("is not a number")
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, errors.New("is not a finite number")
	}
	return v, nil
}

// MaxInt is the largest integer parameter a spec takes (2^53): integers above it are
// not all representable in the float64 a distribution samples, so their text would
// not read back.
const MaxInt = 1 << 53

func toInt(f float64) (int, error) {
	if f != math.Trunc(f) || math.Abs(f) > MaxInt {
		return 0, fmt.Errorf("%g is not an integer within ±%d", f, MaxInt)
	}
	return int(f), nil
}

func parseMix(args string, fail func(string) error) (Distribution, error) {
	parts := splitMix(args)
	if len(parts) == 0 {
		return nil, fail("no components")
	}
	var m Mixture
	for _, p := range parts {
		ws, ds, ok := strings.Cut(p, "*")
		if !ok {
			return nil, fail(fmt.Sprintf("component %q has no WEIGHT*", p))
		}
		w, err := parseFinite(ws)
		if err != nil {
			return nil, fail(fmt.Sprintf("weight %q %v", ws, err))
		}
		c, err := parse(strings.TrimSpace(ds), false)
		if err != nil {
			return nil, fail(fmt.Sprintf("component %q: %v", ds, err))
		}
		m.Weights = append(m.Weights, w)
		m.Components = append(m.Components, c)
	}
	if err := m.validate(); err != nil {
		return nil, fail(err.Error())
	}
	if sum := m.total(); math.Abs(sum-1) > 1e-9 {
		// Written weights are probabilities: a sum of 1.2 is a typo, not a wish to be
		// normalised (the Mixture type itself normalises).
		return nil, fail(fmt.Sprintf("weights sum to %g; they must sum to 1", sum))
	}
	return m, nil
}

// splitMix splits on the '+' signs that start a new "WEIGHT*" component, so exponents
// such as 1e+3 inside a component survive.
func splitMix(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '+' || i == 0 || s[i-1] == 'e' || s[i-1] == 'E' {
			continue
		}
		rest := s[i+1:]
		ws, _, ok := strings.Cut(rest, "*")
		if !ok {
			continue
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(ws), 64); err != nil {
			continue
		}
		parts = append(parts, s[start:i])
		start = i + 1
	}
	if start < len(s) {
		parts = append(parts, s[start:])
	}
	return parts
}

func parseEmpirical(args string, fail func(string) error) (Distribution, error) {
	if args == "" {
		return nil, fail("missing data")
	}
	if path, field, ok := strings.Cut(args, "#"); ok {
		if path == "" || field == "" {
			return nil, fail("want FILE#FIELD")
		}
		e, err := LoadEmpirical(path, field)
		if err != nil {
			return nil, fail(strings.TrimPrefix(err.Error(), "distribution: "))
		}
		return e, nil
	}
	var vals, counts []float64
	for _, a := range strings.Split(args, ",") {
		vs, cs, hasCount := strings.Cut(strings.TrimSpace(a), "*")
		v, err := parseFinite(vs)
		if err != nil {
			if len(vals) == 0 {
				return nil, fail(fmt.Sprintf("%q is neither FILE#FIELD nor a number", a))
			}
			return nil, fail(fmt.Sprintf("value %q %v", a, err))
		}
		c := 1.0
		if hasCount {
			if c, err = parseFinite(cs); err != nil {
				return nil, fail(fmt.Sprintf("weight %q %v", cs, err))
			}
		}
		vals, counts = append(vals, v), append(counts, c)
	}
	e, err := NewEmpiricalHistogram(vals, counts)
	if err != nil {
		return nil, fail(strings.TrimPrefix(err.Error(), "distribution: "))
	}
	return e, nil
}

// Spec holds a Distribution in configuration structs: it marshals to and from the
// [Parse] text form, so JSON and YAML configs carry "normal:128,20". An
// "empirical:FILE#FIELD" spec reads FILE when unmarshalled, relative to the working
// directory (use an absolute path in configs that move). The zero Spec
// (nil Distribution) means "unset": it marshals to "" and IsZero reports true (so
// `json:",omitzero"` drops it); "" unmarshals to the zero Spec.
type Spec struct{ Distribution }

// MarshalText returns the distribution's String form ("" when unset).
func (s Spec) MarshalText() ([]byte, error) {
	if s.Distribution == nil {
		return []byte{}, nil
	}
	return []byte(s.Distribution.String()), nil
}

// UnmarshalText parses text with [Parse]; empty text gives the zero Spec.
func (s *Spec) UnmarshalText(text []byte) error {
	if strings.TrimSpace(string(text)) == "" {
		s.Distribution = nil
		return nil
	}
	d, err := Parse(string(text))
	if err != nil {
		return err
	}
	s.Distribution = d
	return nil
}

// IsZero reports whether no distribution is set.
func (s Spec) IsZero() bool { return s.Distribution == nil }

// String returns the text form, or "" when unset.
func (s Spec) String() string {
	if s.Distribution == nil {
		return ""
	}
	return s.Distribution.String()
}

// Or returns s's distribution, or def when s is unset.
func (s Spec) Or(def Distribution) Distribution {
	if s.Distribution == nil {
		return def
	}
	return s.Distribution
}
