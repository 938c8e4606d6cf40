package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unit says how a value is measured and printed.
type Unit string

// Units used by the checks.
const (
	Seconds   Unit = "s"     // printed as µs, ms or s
	Tokens    Unit = "tok"   // token counts
	TokPerSec Unit = "tok/s" // token throughput
	ReqPerSec Unit = "req/s" // request throughput
	ImgPerSec Unit = "img/s" // image throughput
	Fraction  Unit = "%"     // a fraction in [0, 1], printed as a percentage
	None      Unit = ""      // a plain number
)

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
