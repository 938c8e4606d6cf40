package reportgen

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/metric"

	"github.com/perfgate/perfgate/record"
)

// DefaultTableTitle is the console summary table's title.
const DefaultTableTitle = "perfgate | LLM Metrics"

// TableOptions tunes [WriteTable]. The zero value gives AIPerf's console rows at their
// natural width with box-drawing borders.
type TableOptions struct {
	// Width is the terminal width in columns; 0 = unlimited. When the table is wider,
	// the metric column wraps and then the least important columns (std, min, p90,
	// max, p99, in that order) are hidden, with a note saying so.
	Width int
	// Title is shown centred above the table; "" = [DefaultTableTitle].
	Title string
	// All shows every metric present, not only the ones AIPerf's console shows.
	All bool
	// ASCII draws borders with +, - and | instead of box-drawing characters.
	ASCII bool
}

var tableCols = []string{"Metric", "avg", "min", "max", "p99", "p90", "p50", "std"}

// dropOrder is the order in which columns are hidden to fit a narrow terminal.
var dropOrder = []string{"std", "min", "p90", "max", "p99"}

// WriteTable writes the console summary of m in the shape AIPerf users know: one row
// per metric (distribution metrics first, then single values such as throughputs and
// counts, whose value is in the avg column), with avg, min, max, p99, p90, p50 and std
// columns and the unit after each metric's name. Numbers have two decimals and
// thousands separators. Errors by kind follow the table when there are any.
func WriteTable(w io.Writer, m record.Metrics, opts TableOptions) error {
	var rows [][]string
	for _, n := range statNames(m) {
		mi := info(n)
		if !opts.All && !mi.Console {
			continue
		}
		s := m.Stats[n]
		rows = append(rows, []string{label(mi.Header, s.Unit), num(s.Avg), num(s.Min), num(s.Max), num(s.P99), num(s.P90), num(s.P50), num(s.Std)})
	}
	for _, n := range scalarNames(m) {
		mi := info(n)
		if !opts.All && !mi.Console {
			continue
		}
		s := m.Scalars[n]
		v := num(s.Value)
		switch {
		case n == record.MetricRequestCount || n == record.MetricErrorCount || n == record.MetricGoodRequestCount:
			v = fmt.Sprintf("%d", int64(s.Value))
		case s.Unit == metric.UnitRatio:
			v = fmt.Sprintf("%.4f", s.Value) // a hit rate's gap of 0.0213 is not 0.02
		}
		rows = append(rows, []string{label(mi.Header, s.Unit), v, "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"})
	}
	cols := slices.Clone(tableCols)
	keep := func(drop map[string]bool) ([]string, [][]string) {
		var cs []string
		var idx []int
		for i, c := range cols {
			if !drop[c] {
				cs = append(cs, c)
				idx = append(idx, i)
			}
		}
		rs := make([][]string, len(rows))
		for r, row := range rows {
			for _, i := range idx {
				rs[r] = append(rs[r], row[i])
			}
		}
		return cs, rs
	}
	// Fit a narrow terminal: prefer wrapping the metric column to 2-3 lines, then
	// hiding the least important columns, then wrapping the metric column harder.
	drop := map[string]bool{}
	var hidden []string
	cs, rs := keep(drop)
	wrap := 0 // metric column width limit; 0 = natural
	if opts.Width > 0 && tableWidth(colWidths(cs, rs, 0)) > opts.Width {
		minMetric := 16
		for _, r := range rs {
			for _, wd := range strings.Fields(r[0]) {
				minMetric = max(minMetric, utf8.RuneCountInString(wd))
			}
		}
		fits := func(wr int) bool { return tableWidth(colWidths(cs, rs, wr)) <= opts.Width }
		found := false
		for k := 0; k <= len(dropOrder) && !found; k++ {
			hidden = dropOrder[:k]
			drop = map[string]bool{}
			for _, d := range hidden {
				drop[d] = true
			}
			cs, rs = keep(drop)
			for _, wr := range []int{0, 28, 24, 20} {
				if wr != 0 && wr < minMetric {
					continue
				}
				if fits(wr) {
					wrap, found = wr, true
					break
				}
			}
		}
		if !found {
			wrap = minMetric // as narrow as it gets: print it anyway
		}
	}
	widths := colWidths(cs, rs, wrap)
	bx := boxChars(opts.ASCII)
	var b strings.Builder
	title := cmp.Or(opts.Title, DefaultTableTitle)
	tw := tableWidth(widths)
	if pad := (tw - utf8.RuneCountInString(title)) / 2; pad > 0 {
		b.WriteString(strings.Repeat(" ", pad))
	}
	b.WriteString(title + "\n")
	border := func(l, m, r, h string) {
		b.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat(h, wd+2))
		}
		b.WriteString(r + "\n")
	}
	line := func(v, cells []string) {
		b.WriteString(v[0])
		for i, cell := range cells {
			if i > 0 {
				b.WriteString(v[1])
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				b.WriteString(" " + cell + pad + " ")
			} else {
				b.WriteString(" " + pad + cell + " ")
			}
		}
		b.WriteString(v[2] + "\n")
	}
	border(bx.tl, bx.tm, bx.tr, bx.hh)
	line([]string{bx.vh, bx.vh, bx.vh}, cs)
	border(bx.ml, bx.mm, bx.mr, bx.hh)
	for _, r := range rs {
		parts := wrapText(r[0], widths[0])
		for k, p := range parts {
			cells := make([]string, len(r))
			cells[0] = p
			if k == 0 {
				copy(cells[1:], r[1:])
			}
			line([]string{bx.v, bx.v, bx.v}, cells)
		}
	}
	border(bx.bl, bx.bm, bx.br, bx.h)
	if len(hidden) > 0 {
		fmt.Fprintf(&b, "(hidden to fit %d columns: %s)\n", opts.Width, strings.Join(hidden, ", "))
	}
	if len(m.Errors) > 0 {
		kinds := make([]string, 0, len(m.Errors))
		for k := range m.Errors {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			return cmp.Or(m.Errors[kinds[j]]-m.Errors[kinds[i]], cmp.Compare(kinds[i], kinds[j])) < 0
		})
		b.WriteString("Errors by kind:")
		for _, k := range kinds {
			fmt.Fprintf(&b, " %s=%d", k, m.Errors[k])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func label(header, unit string) string {
	if unit == "" {
		return header
	}
	return header + " (" + aiperfUnit(unit) + ")"
}

func colWidths(cols []string, rows [][]string, wrap int) []int {
	w := make([]int, len(cols))
	for i, c := range cols {
		w[i] = utf8.RuneCountInString(c)
	}
	for _, r := range rows {
		for i, cell := range r {
			n := utf8.RuneCountInString(cell)
			if i == 0 && wrap > 0 {
				for _, p := range wrapText(cell, wrap) {
					w[0] = max(w[0], utf8.RuneCountInString(p))
				}
				continue
			}
			w[i] = max(w[i], n)
		}
	}
	return w
}

// tableWidth is the printed width of a table with the given column widths.
func tableWidth(widths []int) int {
	t := 1
	for _, w := range widths {
		t += w + 3
	}
	return t
}

// wrapText splits s into lines of at most width runes at spaces (words longer than
// width stay whole).
func wrapText(s string, width int) []string {
	if utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	cur := ""
	for _, wd := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = wd
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(wd) <= width:
			cur += " " + wd
		default:
			lines = append(lines, cur)
			cur = wd
		}
	}
	return append(lines, cur)
}

type box struct{ tl, tm, tr, ml, mm, mr, bl, bm, br, h, hh, v, vh string }

func boxChars(ascii bool) box {
	if ascii {
		return box{"+", "+", "+", "+", "+", "+", "+", "+", "+", "-", "=", "|", "|"}
	}
	return box{"┏", "┳", "┓", "┡", "╇", "┩", "└", "┴", "┘", "─", "━", "│", "┃"}
}

func sortStrings(s []string) { sort.Strings(s) }
