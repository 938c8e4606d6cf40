package reportgen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWriteTableGolden(t *testing.T) {
	m := metricsOf(syntheticRun(300, 1))
	var all bytes.Buffer
	for _, tc := range []struct {
		name string
		opts TableOptions
	}{
		{"natural", TableOptions{}},
		{"width 100", TableOptions{Width: 100}},
		{"width 72", TableOptions{Width: 72}},
		{"width 50", TableOptions{Width: 50}},
		{"ascii all", TableOptions{ASCII: true, All: true}},
	} {
		var b bytes.Buffer
		if err := WriteTable(&b, m, tc.opts); err != nil {
			t.Fatal(err)
		}
		if tc.opts.Width > 0 {
			for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
				if strings.HasPrefix(line, "(hidden") {
					continue
				}
				if n := utf8.RuneCountInString(line); n > tc.opts.Width && tc.opts.Width >= 60 {
					t.Errorf("%s: line is %d columns, want <= %d: %q", tc.name, n, tc.opts.Width, line)
				}
			}
		}
		fmt.Fprintf(&all, "== %s\n%s\n", tc.name, b.String())
	}
	golden(t, "table.txt", all.Bytes())
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{0, "0.00"}, {1274.634, "1,274.63"}, {-1234567.891, "-1,234,567.89"}, {0.004, "0.00"}, {999.999, "1,000.00"}} {
		if got := num(tc.in); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
