package metric

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/record"
)

// SLOError is the error of SLO text that cannot be read: the text, the 1-based
// column (in bytes) where the problem is, and what was wanted there.
type SLOError struct {
	Text   string
	Column int
	Msg    string
}

func (e *SLOError) Error() string {
	return fmt.Sprintf("metric: SLO %q, column %d: %s", e.Text, e.Column, e.Msg)
}

// sloNames maps the names an SLO term may use to the bound they set: the short
// names rules use and AIPerf's metric names.
var sloNames = map[string]string{
	"ttft": "ttft", record.MetricTTFT: "ttft",
	"itl": "itl", record.MetricITL: "itl",
	"latency": "latency", record.MetricRequestLatency: "latency",
}

// ParseSLO reads an SLO, the one parser of both ways perfgate writes one:
//
//	time_to_first_token:200 inter_token_latency:20   AIPerf's --goodput: NAME:MILLISECONDS
//	ttft<=200ms, itl<=20ms                            rule terms, as inside goodput(…)
//
// Terms are separated by spaces or commas, and the two forms may be mixed. A name is
// ttft, itl or latency, or AIPerf's time_to_first_token, inter_token_latency or
// request_latency. After ":" the value is a number of milliseconds; after "<=" it is
// Go duration text ("200ms", "1.5s") or a bare number of milliseconds. Each bound is
// given at most once and must be a positive duration of at least 1ns and at most
// [MaxDuration]: a bound that overflows, is not finite or rounds to zero is an error,
// never "no bound". The error is a [*SLOError] naming the column.
// [SLO.Terms] writes text that ParseSLO reads back to the same SLO (ITLPercentile,
// which the text has no place for, aside).
func ParseSLO(text string) (SLO, error) {
	var s SLO
	fail := func(at int, format string, a ...any) (SLO, error) {
		return SLO{}, &SLOError{Text: text, Column: at + 1, Msg: fmt.Sprintf(format, a...)}
	}
	sep := func(c byte) bool { return c == ' ' || c == '\t' || c == ',' || c == '\n' || c == '\r' }
	seen := map[string]bool{}
	i := 0
	for {
		for i < len(text) && sep(text[i]) {
			i++
		}
		if i == len(text) {
			break
		}
		at := i
		for i < len(text) && (isIdent(text[i])) {
			i++
		}
		name := text[at:i]
		if name == "" {
			return fail(at, "want an SLO term such as ttft<=200ms or time_to_first_token:200, got %q", text[at:at+1])
		}
		bound, ok := sloNames[name]
		if !ok {
			return fail(at, "unknown SLO metric %q; want ttft, itl or latency (or time_to_first_token, inter_token_latency, request_latency)", name)
		}
		if seen[bound] {
			return fail(at, "%s is bounded twice", name)
		}
		seen[bound] = true
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		opAt := i
		var ms bool // NAME:MS
		switch rest := text[i:]; {
		case strings.HasPrefix(rest, ":"):
			ms, i = true, i+1
		case strings.HasPrefix(rest, "<="):
			i += 2
		case strings.HasPrefix(rest, ">="):
			return fail(opAt, "an SLO term is an upper bound: want %s<=DURATION", name)
		default:
			return fail(opAt, "want %s<=DURATION or %s:MILLISECONDS", name, name)
		}
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		valAt := i
		for i < len(text) && !sep(text[i]) && text[i] != ')' {
			i++
		}
		val := text[valAt:i]
		var d time.Duration
		var err error
		if ms {
			d, err = Milliseconds(val)
		} else {
			d, err = ParseLatency(val)
		}
		if err != nil {
			return fail(valAt, "%s: %v", name, err)
		}
		switch bound {
		case "ttft":
			s.TTFT = d
		case "itl":
			s.ITL = d
		case "latency":
			s.Latency = d
		}
	}
	if len(seen) == 0 {
		return fail(0, "empty; want e.g. ttft<=200ms or time_to_first_token:200")
	}
	return s, nil
}

func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// ParseAIPerfSLO reads AIPerf's --goodput form, space-separated metric:milliseconds
// pairs ("time_to_first_token:200 inter_token_latency:20").
//
// Deprecated: it is [ParseSLO], which reads this form and rule terms ("ttft<=200ms").
func ParseAIPerfSLO(text string) (SLO, error) { return ParseSLO(text) }

// Terms writes s as ParseSLO's rule terms, "ttft<=200ms, itl<=20ms"; "" for the zero
// SLO. ITLPercentile has no place in the text.
func (s SLO) Terms() string {
	var terms []string
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"ttft", s.TTFT}, {"itl", s.ITL}, {"latency", s.Latency}} {
		if t.d > 0 {
			terms = append(terms, t.name+"<="+t.d.String())
		}
	}
	return strings.Join(terms, ", ")
}

// MaxDuration is the longest bound a duration can hold (about 292 years).
const MaxDuration = time.Duration(math.MaxInt64)

// ParseLatency reads a latency bound: Go duration text ("250ms", "1.5s") or a bare
// number of milliseconds, as AIPerf writes them. The bound must be positive, at least
// 1ns and at most [MaxDuration]; the error says which limit the value broke.
func ParseLatency(text string) (time.Duration, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, errors.New("want a duration such as 200ms (a bare number is ms)")
	}
	if _, err := strconv.ParseFloat(text, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
		d, err := time.ParseDuration(text)
		switch {
		case err != nil && durationNanos(text) >= math.MaxInt64:
			return 0, fmt.Errorf("%s is beyond the longest duration, %v", text, MaxDuration)
		case err != nil:
			return 0, errors.New("want Go duration text such as 250ms or 1.5s (a bare number is ms)")
		case d <= 0:
			return 0, fmt.Errorf("%s: want a positive duration of at least 1ns", text)
		}
		return d, nil
	}
	return Milliseconds(text)
}

// Milliseconds reads a bare number of milliseconds as a positive duration: at least
// 1ns after rounding to the nanosecond and at most [MaxDuration].
func Milliseconds(text string) (time.Duration, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && x != 0:
		return 0, fmt.Errorf("%s ms is beyond the longest duration, %v", text, MaxDuration)
	case err != nil:
		return 0, fmt.Errorf("%q: want a number of milliseconds", text)
	case math.IsNaN(x):
		return 0, fmt.Errorf("%s: want a number of milliseconds", text)
	case !(x > 0):
		return 0, fmt.Errorf("%s ms: want a positive duration", text)
	}
	ns := math.Round(x * 1e6)
	switch {
	case ns >= math.MaxInt64: // also +Inf
		return 0, fmt.Errorf("%s ms is beyond the longest duration, %v", text, MaxDuration)
	case ns < 1:
		return 0, fmt.Errorf("%s ms rounds to 0ns; the shortest bound is 1ns (1e-06 ms)", text)
	}
	return time.Duration(ns), nil
}

// durationNanos returns the nanoseconds of Go duration text as a float, so that text
// too long for a time.Duration can be told from text that is not a duration; -1 when
// it is not one.
func durationNanos(text string) float64 {
	units := []struct {
		name string
		ns   float64
	}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"μs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}}
	text = strings.TrimPrefix(text, "+")
	total := 0.0
	for text != "" {
		n := 0
		for n < len(text) && (text[n] >= '0' && text[n] <= '9' || text[n] == '.') {
			n++
		}
		x, err := strconv.ParseFloat(text[:n], 64)
		if n == 0 || err != nil {
			return -1
		}
		text = text[n:]
		found := false
		for _, u := range units {
			if strings.HasPrefix(text, u.name) && !(u.name == "m" && strings.HasPrefix(text, "ms")) {
				total += x * u.ns
				text, found = text[len(u.name):], true
				break
			}
		}
		if !found {
			return -1
		}
	}
	return total
}

// Err reports bounds of s that mean nothing: a negative duration (which would read as
// "no bound"; 0 is "no bound" as written) or an ITLPercentile outside [0, 1].
func (s SLO) Err() error {
	var errs []error
	for _, b := range []struct {
		name string
		d    time.Duration
	}{{"ttft", s.TTFT}, {"itl", s.ITL}, {"latency", s.Latency}} {
		if b.d < 0 {
			errs = append(errs, fmt.Errorf("slo %s %v: want a positive duration (0 = no bound)", b.name, b.d))
		}
	}
	if q := s.ITLPercentile; !(q >= 0 && q <= 1) {
		errs = append(errs, fmt.Errorf("slo itl_percentile %v: want within [0, 1]", q))
	}
	return errors.Join(errs...)
}
