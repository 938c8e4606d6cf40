package reportgen

import (
	"math"
	"strconv"
	"strings"
)

// FormatNumber is how the console table, the CSV and the HTML report write a metric's
// value: two decimals with thousands separators ("1,274.63"), NaN and ±Inf as "N/A".
func FormatNumber(v float64) string { return num(v) }

// num formats v as AIPerf's console does: two decimals with thousands separators
// ("1,274.63"); NaN and ±Inf as "N/A".
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "N/A"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', 2, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 && s != "0.00" {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}
