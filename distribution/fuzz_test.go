package distribution_test

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

// FuzzParse feeds spec text (scenario files and flags carry it) to Parse. Property:
// an error, or a distribution whose String parses back to one with the same String
// and mean, and which samples, quantiles and CDFs without a panic or a NaN. Seeds:
// testdata/specs.txt.
func FuzzParse(f *testing.F) {
	file, err := os.Open("testdata/specs.txt")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			f.Add(line)
		}
	}
	file.Close()
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "#") {
			return // empirical:FILE#FIELD reads a file; not the fuzzer's business
		}
		d, err := distribution.Parse(text)
		if err != nil {
			return
		}
		s := d.String()
		back, err := distribution.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %v, whose String %q does not parse: %v", text, d, s, err)
		}
		if back.String() != s {
			t.Fatalf("Parse(%q).String() = %q, which reads back as %q", text, s, back.String())
		}
		m := d.Mean()
		if math.IsNaN(m) {
			t.Fatalf("Parse(%q) = %v has a NaN mean", text, d)
		}
		// The String form merges equal values, so the mean is summed in another order:
		// equal to within float64 rounding (a few ulps), not bit for bit.
		if m2 := back.Mean(); m2 != m && math.Abs(m2-m) > 1e-12*math.Max(math.Abs(m), math.Abs(m2)) {
			t.Fatalf("Parse(%q) has mean %v, its String %q mean %v", text, m, s, m2)
		}
		r := distribution.WithSrc(d, rand.NewPCG(1, 2))
		for range 16 {
			if x := r.Rand(); math.IsNaN(x) {
				t.Fatalf("Parse(%q).Rand() = NaN", text)
			}
		}
		for _, p := range []float64{0, 0.5, 1} {
			if q := d.Quantile(p); math.IsNaN(q) {
				t.Fatalf("Parse(%q).Quantile(%v) = NaN", text, p)
			}
		}
		if c := d.CDF(m); math.IsNaN(c) || c < 0 || c > 1 {
			t.Fatalf("Parse(%q).CDF(%v) = %v", text, m, c)
		}
	})
}

// Specs that validated and then panicked or overflowed at run time (issue 26) are
// refused, with the value and the limit in the message.
func TestParseRefusesOverflow(t *testing.T) {
	for text, want := range map[string]string{
		"uniformint:-9e18,9e18":     "bounds must be integers within ±9007199254740992",
		"vllm-range:9e18,0.5":       "len must be an integer within ±9007199254740992",
		"sglang-range:9e18,0.5":     "len must be an integer within ±9007199254740992",
		"empirical:1*1e308,2*1e308": "the counts sum beyond 1.79769313486231",
		"uniform:-1e308,1e308":      "max 1e+308 - min -1e+308 overflows float64",
		"fixed:1e400":               `value "1e400" is out of range (|x| <= 1.7976931348623157e+308)`,
		"normal:inf,1":              `mu "inf" is not a finite number`,
		"empirical:1,nan":           `value "nan" is not a finite number`,
		"mix:inf*fixed:1":           `weight "inf" is not a finite number`,
	} {
		_, err := distribution.Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", text, err, want)
		}
	}
	// Struct literals are checked the same way when used.
	for _, d := range []distribution.Distribution{
		distribution.UniformInt{Min: math.MinInt64 / 2, Max: math.MaxInt64/2 + 2},
		distribution.VLLMRange{Len: math.MaxInt64 / 2, Ratio: 0.5},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "overflows int64") && !strings.Contains(r.(string), "above the limit") {
					t.Errorf("%#v.Rand() panicked with %v; want the validation message", d, r)
				}
			}()
			d.Rand()
		}()
	}
	// At the limits, specs read back and sample.
	for _, text := range []string{"uniformint:-9007199254740992,9007199254740992", "vllm-range:9007199254740992,0.5", "empirical:1*1e307,2*1e307"} {
		d, err := distribution.Parse(text)
		if err != nil {
			t.Errorf("Parse(%q) = %v", text, err)
			continue
		}
		if back, err := distribution.Parse(d.String()); err != nil || back.String() != d.String() {
			t.Errorf("Parse(%q).String() = %q reads back as %v, %v", text, d, back, err)
		}
		if x := d.Rand(); math.IsNaN(x) {
			t.Errorf("Parse(%q).Rand() = NaN", text)
		}
	}
}

// A length spec whose draws (almost) never round to 1 or more is refused by
// Length.Err, which configurations call, instead of Length.Rand panicking mid-run.
func TestLengthErr(t *testing.T) {
	for _, text := range []string{"fixed:0", "fixed:0.4", "normal:-100,1", "uniform:-100,0.6"} {
		l := distribution.Length{Dist: distribution.MustParse(text)}
		if err := l.Err(); err == nil || !strings.Contains(err.Error(), "want at least 0.05") {
			t.Errorf("Length{%s}.Err() = %v", text, err)
		}
	}
	for _, text := range []string{"fixed:1", "normal:0,10", "uniform:-1,1", "empirical:0*19,1"} {
		l := distribution.Length{Dist: distribution.MustParse(text)}
		if err := l.Err(); err != nil {
			t.Errorf("Length{%s}.Err() = %v", text, err)
		}
		if n := l.Rand(); n < 1 {
			t.Errorf("Length{%s}.Rand() = %d", text, n)
		}
	}
}
