package reportgen

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

// estimate is a load level's value of one quantity: the mean over its runs and the
// run-to-run range (the smallest and largest run; Lo = Hi = Mean for one run). The
// range, not a t interval, because sweeps repeat a level two or three times, where a
// t interval (t = 12.7 for two runs at 95%) says nothing a reader can use.
type estimate struct{ Mean, Lo, Hi float64 }

func estimateOf(v []float64) estimate {
	var xs []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return estimate{math.NaN(), math.NaN(), math.NaN()}
	}
	return estimate{mean(xs), slices.Min(xs), slices.Max(xs)}
}

// paretoPoint is one load level on a latency–throughput chart.
type paretoPoint struct {
	Label string // "8" (the load)
	X, Y  estimate
	Runs  int
}

// frontier marks the points no other point beats: with lowerY, a point is dominated
// when another has at least its x and at most its y, one of them strictly; with
// higher-is-better y, at least its x and at least its y.
func frontier(pts []paretoPoint, lowerY bool) []bool {
	on := make([]bool, len(pts))
	for i, p := range pts {
		if math.IsNaN(p.X.Mean) || math.IsNaN(p.Y.Mean) {
			continue
		}
		on[i] = true
		for j, q := range pts {
			if i == j || math.IsNaN(q.X.Mean) || math.IsNaN(q.Y.Mean) {
				continue
			}
			betterY := q.Y.Mean <= p.Y.Mean
			strictY := q.Y.Mean < p.Y.Mean
			if !lowerY {
				betterY, strictY = q.Y.Mean >= p.Y.Mean, q.Y.Mean > p.Y.Mean
			}
			if q.X.Mean >= p.X.Mean && betterY && (q.X.Mean > p.X.Mean || strictY) {
				on[i] = false
				break
			}
		}
	}
	return on
}

// paretoSet is one series of a latency–throughput chart (e.g. TTFT p99).
type paretoSet struct {
	Label string
	Pts   []paretoPoint
}

// paretoSVG draws latency (or per-user rate) against throughput: each load level a dot
// with its run-to-run intervals as whiskers, the Pareto frontier joined by a line and
// its dots filled (the others hollow), and a dashed horizontal line at slo (NaN = none).
func paretoSVG(title, xlabel, ylabel string, sets []paretoSet, lowerY bool, slo float64, sloLabel string) string {
	xmax, ymax := 0.0, 0.0
	for _, s := range sets {
		for _, p := range s.Pts {
			xmax = math.Max(xmax, nanTo0(math.Max(p.X.Hi, p.X.Mean)))
			ymax = math.Max(ymax, nanTo0(math.Max(p.Y.Hi, p.Y.Mean)))
		}
	}
	if !math.IsNaN(slo) {
		ymax = math.Max(ymax, slo)
	}
	var b strings.Builder
	f := newFrame(640, 300, 0, niceMax(xmax*1.05), 0, niceMax(ymax*1.05))
	f.open(&b, "pareto", title, xlabel, ylabel)
	if !math.IsNaN(slo) {
		y := f.py(slo)
		fmt.Fprintf(&b, `<g class="slo" data-value="%g"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.2" stroke-dasharray="6 4"/>`,
			slo, c(f.left), c(y), c(f.w-f.right), c(y), errorColor)
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" fill="%s">%s</text></g>`, c(f.left+4), c(y-4), errorColor, esc(sloLabel))
	}
	var labels, colors []string
	for i, s := range sets {
		col := palette[i%len(palette)]
		labels, colors = append(labels, s.Label), append(colors, col)
		on := frontier(s.Pts, lowerY)
		var fr []paretoPoint
		for k, p := range s.Pts {
			if on[k] {
				fr = append(fr, p)
			}
		}
		slices.SortFunc(fr, func(a, b paretoPoint) int { return cmp.Compare(a.X.Mean, b.X.Mean) })
		fmt.Fprintf(&b, `<g class="series" data-label="%s">`, esc(s.Label))
		if len(fr) > 0 {
			var p strings.Builder
			for k, pt := range fr {
				fmt.Fprintf(&p, "%s%s %s", map[bool]string{true: "M", false: "L"}[k == 0], c(f.px(pt.X.Mean)), c(f.py(pt.Y.Mean)))
			}
			fmt.Fprintf(&b, `<path class="line frontier" d="%s" fill="none" stroke="%s" stroke-width="1.8"/>`, p.String(), col)
		}
		for k, pt := range s.Pts {
			if math.IsNaN(pt.X.Mean) || math.IsNaN(pt.Y.Mean) {
				continue
			}
			x, y := f.px(pt.X.Mean), f.py(pt.Y.Mean)
			if pt.Runs > 1 { // run-to-run intervals
				fmt.Fprintf(&b, `<path class="interval" d="M%s %sV%sM%s %sH%s" stroke="%s" stroke-width="1" fill="none"/>`,
					c(x), c(f.py(pt.Y.Lo)), c(f.py(pt.Y.Hi)), c(f.px(pt.X.Lo)), c(y), c(f.px(pt.X.Hi)), col)
			}
			fill, cls := "#fff", "pt"
			if on[k] {
				fill, cls = col, "pt on-frontier"
			}
			fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="3.6" fill="%s" stroke="%s" stroke-width="1.4"><title>%s %s: %s, %s%s</title></circle>`,
				cls, c(x), c(y), fill, col, esc(s.Label), esc(pt.Label), fmtTick(pt.X.Mean), fmtTick(pt.Y.Mean), intervalNote(pt))
			if i == 0 {
				fmt.Fprintf(&b, `<text class="tick pt-label" x="%s" y="%s">%s</text>`, c(x+5), c(y-5), esc(pt.Label))
			}
		}
		b.WriteString(`</g>`)
	}
	f.legend(&b, labels, colors)
	b.WriteString(`</svg>`)
	return b.String()
}

func intervalNote(p paretoPoint) string {
	if p.Runs < 2 {
		return ""
	}
	return fmt.Sprintf(" (mean of %d runs; ranges x %s–%s, y %s–%s)", p.Runs, fmtTick(p.X.Lo), fmtTick(p.X.Hi), fmtTick(p.Y.Lo), fmtTick(p.Y.Hi))
}

func nanTo0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// paretoFigures draws the latency–throughput charts of a sweep, search or repeated
// run: TTFT and ITL (p50, p99) against output tokens/s and against requests/s, and
// output tokens/s per user against output tokens/s in total, with the goodput SLO's
// TTFT and ITL limits as lines. Repeats at one load level are one point with its
// run-to-run intervals.
func paretoFigures(loadName string, points []sweep.Point) []figure {
	var loads []float64
	byLoad := map[float64][]record.Metrics{}
	for _, pt := range points {
		if _, ok := byLoad[pt.Load]; !ok {
			loads = append(loads, pt.Load)
		}
		byLoad[pt.Load] = append(byLoad[pt.Load], pt.Metrics)
	}
	slices.Sort(loads)
	est := func(l float64, f func(record.Metrics) float64) estimate {
		var v []float64
		for _, m := range byLoad[l] {
			v = append(v, f(m))
		}
		return estimateOf(v)
	}
	set := func(label string, x, y func(record.Metrics) float64) paretoSet {
		s := paretoSet{Label: label}
		for _, l := range loads {
			s.Pts = append(s.Pts, paretoPoint{Label: fmtTick(l), X: est(l, x), Y: est(l, y), Runs: len(byLoad[l])})
		}
		return s
	}
	tok := func(m record.Metrics) float64 { return metricScalar(m, record.MetricOutputTokenThroughput) }
	req := func(m record.Metrics) float64 { return metricScalar(m, record.MetricRequestThroughput) }
	q := func(name string, p float64) func(record.Metrics) float64 {
		return func(m record.Metrics) float64 { return metricQuantile(m, name, p) }
	}
	slo := func(name string) (float64, string) {
		for _, pt := range points {
			if v, ok := pt.Metrics.SLO[name]; ok {
				return v, fmt.Sprintf("goodput SLO %s ms", fmtTick(v))
			}
		}
		return math.NaN(), ""
	}
	reps := ""
	if len(points) > len(loads) {
		reps = "; dots are the mean of a level's runs, whiskers the run-to-run range (smallest to largest run)"
	}
	caption := fmt.Sprintf("each dot is one %s level (labelled); filled dots and the line: the Pareto frontier (no other level has more throughput and less latency)%s", loadName, reps)
	var figs []figure
	for _, m := range []struct {
		id, name, metric string
	}{{"ttft", "TTFT", record.MetricTTFT}, {"itl", "ITL", record.MetricITL}} {
		if !slices.ContainsFunc(points, func(p sweep.Point) bool { return p.Metrics.Stats[m.metric].Count > 0 }) {
			continue
		}
		limit, lbl := slo(m.metric)
		sets := []paretoSet{set(m.name+" p50", tok, q(m.metric, 0.5)), set(m.name+" p99", tok, q(m.metric, 0.99))}
		figs = append(figs, figure{ID: "pareto-" + m.id + "-tokens", Caption: caption,
			SVG: template.HTML(paretoSVG(m.name+" against output token throughput", "output tokens/s", m.name+" ms", sets, true, limit, lbl))})
		sets = []paretoSet{set(m.name+" p50", req, q(m.metric, 0.5)), set(m.name+" p99", req, q(m.metric, 0.99))}
		figs = append(figs, figure{ID: "pareto-" + m.id + "-requests", Caption: caption,
			SVG: template.HTML(paretoSVG(m.name+" against request throughput", "requests/s", m.name+" ms", sets, true, limit, lbl))})
	}
	if slices.ContainsFunc(points, func(p sweep.Point) bool { return p.Metrics.Stats[record.MetricOutputTokenThroughputPerUser].Count > 0 }) {
		sets := []paretoSet{set("per user, p50", tok, q(record.MetricOutputTokenThroughputPerUser, 0.5))}
		figs = append(figs, figure{ID: "pareto-per-user", Caption: "what one user sees against what the server delivers in total; the frontier: no other level gives both more",
			SVG: template.HTML(paretoSVG("Output tokens/s per user against in total", "output tokens/s in total", "tokens/s per user", sets, false, math.NaN(), ""))})
	}
	return figs
}
