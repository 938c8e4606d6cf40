package metric

import (
	"math"
	"testing"
)

func TestGroupDigits(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 999.4: "999", 999.6: "1,000", 1000: "1,000", 1234567: "1,234,567",
		-2000: "-2,000", -0.2: "0", 1e20: "100,000,000,000,000,000,000", math.Inf(1): "+Inf", math.NaN(): "NaN"} {
		if got := GroupDigits(x); got != want {
			t.Errorf("GroupDigits(%v) = %q, want %q", x, got, want)
		}
	}
}
