package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// Unit says how a value is measured and printed.
type Unit string

// Units used by the checks.
const (
	Seconds     Unit = "s"         // printed as µs, ms or s
	Tokens      Unit = "tok"       // token counts, printed without the unit
	TokPerSec   Unit = "tok/s"     // token throughput
	Requests    Unit = "req"       // request counts
	ReqPerSec   Unit = "req/s"     // request throughput
	Images      Unit = "img"       // image counts
	ImgPerSec   Unit = "img/s"     // image throughput
	AudioRate   Unit = "audio s/s" // seconds of audio per second
	Joules      Unit = "J"         // energy
	Watts       Unit = "W"         // power
	MiB         Unit = "MiB"       // memory
	TokPerJ     Unit = "tok/J"     // tokens per joule
	JPerReq     Unit = "J/req"     // joules per request
	TokPerGPU   Unit = "tok/s/GPU" // token throughput per GPU
	JobsPerHour Unit = "jobs/h"    // agent jobs per hour
	Sessions    Unit = "sessions"  // sub-agent sessions (per job)
	Fraction    Unit = "%"         // a fraction in [0, 1], printed as a percentage
	None        Unit = ""          // a plain number (a ratio such as RTFx)
)

// catalogueUnits maps each unit of package metric's catalogue ([metric.Units]) to the
// one Unit verdicts parse and print its values in. It is the only such mapping: init
// panics if a catalogue unit is missing from it, and the catalogue refuses a metric in
// a unit outside [metric.Units], so no value is ever shown in a unit it is not in.
var catalogueUnits = map[string]Unit{
	metric.UnitMS:          Seconds, // Metric.Sample converts ms to seconds
	metric.UnitSec:         Seconds,
	metric.UnitTokens:      Tokens,
	metric.UnitTokPerUser:  TokPerSec,
	metric.UnitTokPerSec:   TokPerSec,
	metric.UnitRequests:    Requests,
	metric.UnitReqPerSec:   ReqPerSec,
	metric.UnitImages:      Images,
	metric.UnitImgPerSec:   ImgPerSec,
	metric.UnitAudioRate:   AudioRate,
	metric.UnitRatio:       None,
	metric.UnitJoules:      Joules,
	metric.UnitWatts:       Watts,
	metric.UnitMiB:         MiB,
	metric.UnitTokPerJ:     TokPerJ,
	metric.UnitJPerReq:     JPerReq,
	metric.UnitTokPerGPU:   TokPerGPU,
	metric.UnitJobsPerHour: JobsPerHour,
	metric.UnitSessions:    Sessions,
}

func init() {
	for _, u := range metric.Units() {
		if _, ok := catalogueUnits[u]; !ok {
			panic("check: catalogue unit " + strconv.Quote(u) + " has no check.Unit (catalogueUnits)")
		}
	}
}

// CatalogueUnit returns the Unit verdicts show values of the catalogue unit u in
// ([metric.Def.Unit]: "ms", "images", …), and whether u is a catalogue unit.
func CatalogueUnit(u string) (Unit, bool) {
	cu, ok := catalogueUnits[u]
	return cu, ok
}

// UnitOf returns the Unit verdicts, rules and the regression gate show the catalogue
// metric d's values in: its unit's ([CatalogueUnit]), except that a run-level ratio is
// a fraction of the run's requests or prompt tokens (error_rate, prefix_cache_hit_rate),
// shown as a percentage, where a per-request ratio (rtfx) is a plain number.
func UnitOf(d metric.Def) Unit {
	if d.Kind == metric.PerRun && d.Unit == metric.UnitRatio {
		return Fraction
	}
	u, _ := CatalogueUnit(d.Unit) // every catalogue unit has one (catalogueUnits' init)
	return u
}

// Parse reads a limit written in unit u, as a rule's value: for Seconds, Go duration
// text ("250ms", "1.5s") or a bare number of milliseconds ([metric.ParseLatency]); for
// a Fraction, 0.95 or 95%; otherwise a number, optionally followed by the unit as
// [Unit.Format] prints it ("2 img", "2img", "2").
func (u Unit) Parse(text string) (float64, error) {
	switch u {
	case Seconds:
		d, err := metric.ParseLatency(text)
		return d.Seconds(), err
	case Fraction:
		return fraction(text)
	case Tokens, TokPerSec, Requests, ReqPerSec, Images, ImgPerSec, AudioRate, Joules, Watts, MiB, TokPerJ, JPerReq, TokPerGPU, JobsPerHour, Sessions, None:
		num := strings.TrimSpace(text)
		if u != None {
			num = strings.TrimSpace(strings.TrimSuffix(num, string(u)))
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, fmt.Errorf("want a number of %s", u)
		}
		return x, nil
	}
	return 0, fmt.Errorf("check: unit %q has no parser", string(u))
}

// Format prints x in unit u with three significant digits.
func (u Unit) Format(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	switch u {
	case Seconds:
		a := math.Abs(x)
		switch {
		case a == 0:
			return "0s"
		case a < 1e-3:
			return sig3(x*1e6) + "µs"
		case a < 1:
			if s := sig3(x * 1e3); s != "1000" && s != "-1000" {
				return s + "ms"
			}
			return sig3(x) + "s"
		default:
			return sig3(x) + "s"
		}
	case Fraction:
		return sig3(x*100) + "%"
	case Tokens:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return sig3(x)
	case Images, Requests:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10) + " " + string(u)
		}
		return sig3(x) + " " + string(u)
	case None:
		return sig3(x)
	default:
		return sig3(x) + " " + string(u)
	}
}

// sig3 prints x with three significant digits (more for large integers), no exponent.
func sig3(x float64) string {
	a := math.Abs(x)
	var s string
	switch {
	case a >= 100:
		s = strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		s = strconv.FormatFloat(x, 'f', 2, 64)
	case a == 0:
		return "0"
	default:
		// digits after the point so that three significant digits show
		d := 2 - int(math.Floor(math.Log10(a)))
		s = strconv.FormatFloat(x, 'f', d, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// pname prints a quantile level as "p99", "p99.9", "p50".
func pname(p float64) string {
	if p == 1 {
		return "max"
	}
	if p == 0 {
		return "min"
	}
	return "p" + strconv.FormatFloat(p*100, 'f', -1, 64)
}

// pvalue prints a p-value: small ones in exponent form.
func pvalue(p float64) string {
	if p < 1e-4 && p > 0 {
		return fmt.Sprintf("%.1e", p)
	}
	return sig3(p)
}

func pct(x float64) string { return Fraction.Format(x) }
