package reportgen

import (
	"fmt"
	"html"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file draws the charts of the HTML reports as inline SVG: no script, no network,
// deterministic text (coordinates rounded to 0.1 px) so reports can be golden-tested.

// Palette: two translucent colours for A/B overlays (their overlap mixes visibly), then more.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}

// errorColor is used for error bars and markers.
const errorColor = "#d62728"

// Series is one named set of points of a chart. X and Y have equal length.
type series struct {
	Label string
	X, Y  []float64
}

// frame maps data coordinates onto an SVG canvas with margins for axes.
type frame struct {
	w, h                     float64
	left, right, top, bottom float64
	x0, x1, y0, y1           float64
}

func newFrame(w, h int, x0, x1, y0, y1 float64) frame {
	if !(x1 > x0) {
		x0, x1 = x0-1, x0+1
	}
	if !(y1 > y0) {
		y1 = y0 + 1
	}
	return frame{w: float64(w), h: float64(h), left: 62, right: 16, top: 28, bottom: 44, x0: x0, x1: x1, y0: y0, y1: y1}
}

func (f frame) px(x float64) float64 {
	return f.left + (x-f.x0)/(f.x1-f.x0)*(f.w-f.left-f.right)
}

func (f frame) py(y float64) float64 {
	return f.h - f.bottom - (y-f.y0)/(f.y1-f.y0)*(f.h-f.top-f.bottom)
}

// c formats a coordinate with one decimal (deterministic, compact).
func c(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// niceTicks returns about n round tick values covering [lo, hi] (1, 2, 5 × 10^k steps).
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) || n < 2 {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Ceil(lo/step-1e-9) * step
	var ticks []float64
	for v := start; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
		if len(ticks) > 50 {
			break
		}
	}
	return ticks
}

// niceMax rounds v up to the next tick boundary so bars do not touch the frame's top.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	t := niceTicks(0, v, 5)
	step := v
	if len(t) > 1 {
		step = t[1] - t[0]
	}
	return math.Ceil(v/step-1e-9) * step
}

// fmtTick formats a tick label compactly: 1500 → "1.5k", 0.25 → "0.25".
func fmtTick(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

// open writes the <svg> element with a title, the plot frame and both axes.
func (f frame) open(b *strings.Builder, kind, title, xlabel, ylabel string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg %s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		kind, c(f.w), c(f.h), c(f.w), c(f.h), esc(title))
	fmt.Fprintf(b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(b, `<text class="ttl" x="%s" y="16" text-anchor="middle">%s</text>`, c(f.w/2), esc(title))
	// grid + y ticks
	for _, t := range niceTicks(f.y0, f.y1, 5) {
		y := f.py(t)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(f.left), c(y), c(f.w-f.right), c(y))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, c(f.left-4), c(y+3), fmtTick(t))
	}
	for _, t := range niceTicks(f.x0, f.x1, 6) {
		x := f.px(t)
		fmt.Fprintf(b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(x), c(f.h-f.bottom), c(x), c(f.h-f.bottom+4))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, c(x), c(f.h-f.bottom+15), fmtTick(t))
	}
	fmt.Fprintf(b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(f.left), c(f.h-f.bottom), c(f.w-f.right), c(f.h-f.bottom))
	fmt.Fprintf(b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(f.left), c(f.top), c(f.left), c(f.h-f.bottom))
	fmt.Fprintf(b, `<text class="lbl" x="%s" y="%s" text-anchor="middle">%s</text>`, c((f.left+f.w-f.right)/2), c(f.h-6), esc(xlabel))
	fmt.Fprintf(b, `<text class="lbl" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, c((f.top+f.h-f.bottom)/2), esc(ylabel))
}

// legend writes a small legend in the top-right corner, as wide as its longest label
// (labels over 40 characters are shortened with an ellipsis; the full text is the
// entry's tooltip).
func (f frame) legend(b *strings.Builder, labels []string, colors []string) {
	if len(labels) < 2 {
		return
	}
	const maxRunes = 40
	longest := 0
	short := make([]string, len(labels))
	for i, l := range labels {
		r := []rune(l)
		if len(r) > maxRunes {
			r = append(r[:maxRunes-1], '…')
		}
		short[i] = string(r)
		longest = max(longest, len(r))
	}
	x := f.w - f.right - 20 - 6*float64(longest)
	for i := range labels {
		y := f.top + 4 + float64(i)*14
		fmt.Fprintf(b, `<g class="key"><title>%s</title><rect x="%s" y="%s" width="10" height="10" fill="%s" fill-opacity="0.6"/>`, esc(labels[i]), c(x), c(y), colors[i%len(colors)])
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s">%s</text></g>`, c(x+14), c(y+9), esc(short[i]))
	}
}

func esc(s string) string { return html.EscapeString(s) }

// histSet is one sample drawn in a histogram.
type histSet struct {
	Label  string
	Values []float64
}

// binsFor returns the left edge and bin count covering all sets with the given width.
func binsFor(sets []histSet, width float64) (lo float64, n int) {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, s := range sets {
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			mn, mx = math.Min(mn, v), math.Max(mx, v)
		}
	}
	if math.IsInf(mn, 1) {
		return 0, 0
	}
	lo = math.Floor(mn/width) * width
	n = int(math.Floor((mx-lo)/width)) + 1
	return lo, n
}

// autoBinWidth picks a round bin width giving about 30-40 bins over the data.
func autoBinWidth(sets []histSet) float64 {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, s := range sets {
		for _, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				mn, mx = math.Min(mn, v), math.Max(mx, v)
			}
		}
	}
	if !(mx > mn) {
		return 1
	}
	t := niceTicks(0, (mx-mn)/35*5, 6)
	if len(t) < 2 || t[1] <= 0 {
		return (mx - mn) / 35
	}
	return t[1] - t[0]
}

// histogramSVG draws the sets as overlapping histograms with bins of the given width
// (width <= 0 picks one), the y axis counting requests. Bars are translucent so
// overlaps mix.
func histogramSVG(title, xlabel string, sets []histSet, width float64) string {
	return histogram(title, xlabel, sets, width, false)
}

// histogramShareSVG is [histogramSVG] with each set normalised to its share of its own
// requests (so samples of different sizes compare), drawn as translucent bars with a
// step outline each; when one set's tallest bin is more than four times every other
// set's, the y axis is cut at twice the others' tallest and the cut bars are marked
// with their value, so a spike cannot flatten the other series.
func histogramShareSVG(title, xlabel string, sets []histSet, width float64) string {
	return histogram(title, xlabel, sets, width, true)
}

func histogram(title, xlabel string, sets []histSet, width float64, share bool) string {
	if width <= 0 {
		width = autoBinWidth(sets)
	}
	lo, n := binsFor(sets, width)
	const maxBins = 400
	for n > maxBins { // keep the SVG small for wide ranges
		width *= 2
		lo, n = binsFor(sets, width)
	}
	counts := make([][]float64, len(sets))
	peaks := make([]float64, len(sets))
	for i, s := range sets {
		counts[i] = make([]float64, n)
		total := 0
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			k := int(math.Floor((v - lo) / width))
			k = min(max(k, 0), n-1)
			counts[i][k]++
			total++
		}
		if share && total > 0 {
			for k := range counts[i] {
				counts[i][k] *= 100 / float64(total)
			}
		}
		peaks[i] = slices.Max(append([]float64{0}, counts[i]...))
	}
	top := slices.Max(append([]float64{0}, peaks...))
	cut := math.Inf(1)
	if share && len(sets) > 1 {
		others := 0.0 // the tallest bin of the sets other than the tallest
		for i, p := range peaks {
			if p != top || slices.Index(peaks, top) != i {
				others = math.Max(others, p)
			}
		}
		if others > 0 && top > 4*others {
			cut = niceMax(2 * others)
			top = cut
		}
	}
	ylabel := "requests"
	if share {
		ylabel = "% of requests"
	}
	var b strings.Builder
	f := newFrame(640, 280, lo, lo+float64(max(n, 1))*width, 0, niceMax(top))
	f.open(&b, "histogram", title, xlabel, ylabel)
	labels := make([]string, len(sets))
	for i, s := range sets {
		labels[i] = s.Label
		col := palette[i%len(palette)]
		fmt.Fprintf(&b, `<g class="series" data-label="%s" fill="%s" fill-opacity="0.45" stroke="%s" stroke-opacity="0.8" stroke-width="0.5">`, esc(s.Label), col, col)
		for k, cnt := range counts[i] {
			if cnt == 0 {
				continue
			}
			x0 := f.px(lo + float64(k)*width)
			x1 := f.px(lo + float64(k+1)*width)
			y := f.py(math.Min(cnt, cut))
			val := strconv.Itoa(int(cnt))
			if share {
				val = strconv.FormatFloat(cnt, 'f', 2, 64) + "%"
			}
			cls := "bar"
			if cnt > cut {
				cls = "bar cut"
			}
			fmt.Fprintf(&b, `<rect class="%s" x="%s" y="%s" width="%s" height="%s"><title>%s [%s, %s): %s</title></rect>`,
				cls, c(x0), c(y), c(math.Max(x1-x0, 0.5)), c(f.py(0)-y), esc(s.Label), fmtTick(lo+float64(k)*width), fmtTick(lo+float64(k+1)*width), val)
			if cnt > cut {
				fmt.Fprintf(&b, `<text class="tick cut-label" x="%s" y="%s" text-anchor="middle" fill="%s" stroke="none">↑%s</text>`, c((x0+x1)/2), c(f.top-2), col, esc(val))
			}
		}
		if share { // the set's outline, so it stays visible under another set's bars
			var p strings.Builder
			fmt.Fprintf(&p, "M%s %s", c(f.px(lo)), c(f.py(0)))
			for k, cnt := range counts[i] {
				y := f.py(math.Min(cnt, cut))
				fmt.Fprintf(&p, "V%sH%s", c(y), c(f.px(lo+float64(k+1)*width)))
			}
			fmt.Fprintf(&p, "V%s", c(f.py(0)))
			fmt.Fprintf(&b, `<path class="outline" d="%s" fill="none" stroke="%s" stroke-width="1.2" stroke-opacity="1"/>`, p.String(), col)
		}
		b.WriteString(`</g>`)
	}
	f.legend(&b, labels, palette)
	b.WriteString(`</svg>`)
	return b.String()
}

// ecdfSVG draws the empirical CDF of each set as a step line.
func ecdfSVG(title, xlabel string, sets []histSet) string {
	return ecdfWith(title, xlabel, sets, nil)
}

// ecdfExtra is what an ECDF chart may draw besides the samples: a target CDF (a
// step function over the integers lo..hi, dashed) and a Kolmogorov–Smirnov gap.
type ecdfExtra struct {
	Target      func(k int) float64 // nil = none
	TargetLabel string
	Lo, Hi      int // the target's drawn range
	KS          *ksMark
}

// ksMark is the largest vertical gap between two CDFs: at X, from Y1 to Y2.
type ksMark struct {
	X, Y1, Y2 float64
	Label     string // "D = 0.0312"
}

func ecdfWith(title, xlabel string, sets []histSet, extra *ecdfExtra) string {
	mn, mx := math.Inf(1), math.Inf(-1)
	sorted := make([][]float64, len(sets))
	for i, s := range sets {
		v := make([]float64, 0, len(s.Values))
		for _, x := range s.Values {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				v = append(v, x)
			}
		}
		sort.Float64s(v)
		sorted[i] = v
		if len(v) > 0 {
			mn, mx = math.Min(mn, v[0]), math.Max(mx, v[len(v)-1])
		}
	}
	if extra != nil && extra.Target != nil && extra.Hi >= extra.Lo {
		mn, mx = math.Min(mn, float64(extra.Lo)), math.Max(mx, float64(extra.Hi))
	}
	if math.IsInf(mn, 1) {
		mn, mx = 0, 1
	}
	var b strings.Builder
	f := newFrame(640, 280, mn, mx, 0, 1)
	f.open(&b, "ecdf", title, xlabel, "fraction ≤ x")
	var labels, colors []string
	for i, s := range sets {
		labels, colors = append(labels, s.Label), append(colors, palette[i%len(palette)])
		v := sorted[i]
		if len(v) == 0 {
			continue
		}
		v = thin(v, 800)
		var p strings.Builder
		fmt.Fprintf(&p, "M%s %s", c(f.px(v[0])), c(f.py(0)))
		for k, x := range v {
			y := float64(k+1) / float64(len(v))
			fmt.Fprintf(&p, "H%sV%s", c(f.px(x)), c(f.py(y)))
		}
		fmt.Fprintf(&b, `<path class="line ecdf-line" data-label="%s" d="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, esc(s.Label), p.String(), palette[i%len(palette)])
	}
	if extra != nil && extra.Target != nil && extra.Hi >= extra.Lo {
		const targetColor = "#444"
		labels, colors = append(labels, extra.TargetLabel), append(colors, targetColor)
		step := max(1, (extra.Hi-extra.Lo)/800)
		var p strings.Builder
		fmt.Fprintf(&p, "M%s %s", c(f.px(float64(extra.Lo))), c(f.py(0)))
		for k := extra.Lo; k <= extra.Hi; k += step {
			fmt.Fprintf(&p, "H%sV%s", c(f.px(float64(k))), c(f.py(extra.Target(k))))
		}
		fmt.Fprintf(&b, `<path class="line target-cdf" data-label="%s" d="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3"/>`,
			esc(extra.TargetLabel), p.String(), targetColor)
	}
	if extra != nil && extra.KS != nil {
		k := extra.KS
		x := f.px(k.X)
		fmt.Fprintf(&b, `<g class="ks-d" data-x="%s" data-d="%s"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"/>`,
			strconv.FormatFloat(k.X, 'g', -1, 64), strconv.FormatFloat(math.Abs(k.Y2-k.Y1), 'f', 4, 64), c(x), c(f.py(k.Y1)), c(x), c(f.py(k.Y2)), errorColor)
		anchor, dx := "start", 5.0
		if x > f.w-f.right-110 {
			anchor, dx = "end", -5
		}
		fmt.Fprintf(&b, `<text class="tick ks-label" x="%s" y="%s" text-anchor="%s" fill="%s">%s</text></g>`,
			c(x+dx), c(f.py((k.Y1+k.Y2)/2)+4), anchor, errorColor, esc(k.Label))
	}
	f.legend(&b, labels, colors)
	b.WriteString(`</svg>`)
	return b.String()
}

// thin keeps at most n evenly spaced elements of a sorted slice (always the last one),
// so ECDFs of large runs stay small. Quantile positions are preserved.
func thin(v []float64, n int) []float64 {
	if len(v) <= n {
		return v
	}
	out := make([]float64, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, v[i*len(v)/n-1])
	}
	return out
}

// lineSVG draws series as polylines with point markers (time series).
// band is a shaded stretch of a line chart's x axis: a run's warm-up or its measured
// window on a chart over time.
type band struct {
	Class, Label string // Class: "warmup" or "measured"
	From, To     float64
}

// bandFill is each band class's shade.
var bandFill = map[string]string{"warmup": "#9e9e9e", "measured": "#4caf50"}

func lineSVG(title, xlabel, ylabel string, ss []series, bands ...band) string {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, bd := range bands {
		xmin, xmax = math.Min(xmin, bd.From), math.Max(xmax, bd.To)
	}
	for _, s := range ss {
		for i := range s.X {
			if math.IsNaN(s.Y[i]) {
				continue
			}
			xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			ymax = math.Max(ymax, s.Y[i])
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 1
	}
	var b strings.Builder
	f := newFrame(640, 260, xmin, xmax, 0, niceMax(ymax))
	f.open(&b, "timeseries", title, xlabel, ylabel)
	free := 0.0 // where the next band's label may start, so labels never overlap
	for _, bd := range bands {
		x0, x1 := f.px(bd.From), f.px(bd.To)
		fmt.Fprintf(&b, `<g class="band %s"><rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.14"><title>%s: %s–%s s</title></rect>`,
			esc(bd.Class), c(x0), c(f.top), c(math.Max(x1-x0, 1)), c(f.h-f.bottom-f.top), bandFill[bd.Class], esc(bd.Label), fmtTick(bd.From), fmtTick(bd.To))
		lx := math.Max(x0+3, free)
		fmt.Fprintf(&b, `<text class="tick band-label" x="%s" y="%s">%s</text></g>`, c(lx), c(f.top+10), esc(bd.Label))
		free = lx + 9*float64(utf8.RuneCountInString(bd.Label)) + 8 // at most ~9 px a character at the tick size
	}
	labels := make([]string, len(ss))
	for i, s := range ss {
		labels[i] = s.Label
		col := palette[i%len(palette)]
		var p strings.Builder
		pen := "M"
		for k := range s.X {
			if math.IsNaN(s.Y[k]) {
				pen = "M"
				continue
			}
			fmt.Fprintf(&p, "%s%s %s", pen, c(f.px(s.X[k])), c(f.py(s.Y[k])))
			pen = "L"
		}
		fmt.Fprintf(&b, `<g class="series" data-label="%s">`, esc(s.Label))
		fmt.Fprintf(&b, `<path class="line" d="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, p.String(), col)
		for k := range s.X {
			if math.IsNaN(s.Y[k]) {
				continue
			}
			fmt.Fprintf(&b, `<circle class="pt" cx="%s" cy="%s" r="2.2" fill="%s"><title>%s: %s</title></circle>`, c(f.px(s.X[k])), c(f.py(s.Y[k])), col, fmtTick(s.X[k]), fmtTick(s.Y[k]))
		}
		b.WriteString(`</g>`)
	}
	f.legend(&b, labels, palette)
	b.WriteString(`</svg>`)
	return b.String()
}

// barSVG draws one bar per x (bucket start, bucket width w) in the given colour.
func barSVG(title, xlabel, ylabel string, x []float64, w float64, y []float64, color string) string {
	xmax, ymax := 0.0, 0.0
	for i := range x {
		xmax = math.Max(xmax, x[i]+w)
		ymax = math.Max(ymax, y[i])
	}
	xmin := 0.0
	if len(x) > 0 {
		xmin = x[0]
	}
	var b strings.Builder
	f := newFrame(640, 220, xmin, math.Max(xmax, xmin+w), 0, niceMax(ymax))
	f.open(&b, "bars", title, xlabel, ylabel)
	fmt.Fprintf(&b, `<g class="series" fill="%s" fill-opacity="0.75">`, color)
	for i := range x {
		if y[i] == 0 {
			continue
		}
		x0, x1 := f.px(x[i]), f.px(x[i]+w)
		fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
			c(x0), c(f.py(y[i])), c(math.Max(x1-x0-1, 0.5)), c(f.py(0)-f.py(y[i])), fmtTick(x[i]), fmtTick(y[i]))
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}
