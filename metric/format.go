package metric

import (
	"fmt"
	"math"
	"strings"
)

// GroupDigits formats x rounded to an integer with thousands separators ("2,000"),
// as perfgate's messages print request rates and counts (the schedule watch's abort
// reason, the client-bound verdicts); NaN and ±Inf print as fmt prints them.
func GroupDigits(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	d := fmt.Sprintf("%.0f", math.Abs(x))
	var b strings.Builder
	if x <= -0.5 {
		b.WriteByte('-')
	}
	for i := range len(d) {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(d[i])
	}
	return b.String()
}
