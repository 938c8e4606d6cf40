package reportgen

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// GateReportFile is the regression gate's HTML report, written beside the runs.
const GateReportFile = "gate_report.html"

// GateReport is what [WriteGateReport] draws: a regression gate's answer, where each
// side ran, and one section per metric.
type GateReport struct {
	Title    string
	Headline string   // the gate's one-sentence answer
	Where    []string // where each side ran and what answered
	Metrics  []GateMetric
}

// GateMetric is one statistic's comparison: every run's value on each side, the ratio
// current/baseline with its interval, and the margin δ.
type GateMetric struct {
	Name    string // "TTFT p50"
	Unit    string // check.Unit's text: "s", "tok/s", "req/s", "%", ""
	Verdict string // the verdict's sentence
	Pass    bool
	Change  string // "regressed", "no regression", "inconclusive", "improved"
	// Gating is set for a statistic that can fail the gate (a primary one, or named).
	Gating            bool
	Baseline, Current []float64
	// Ratio is current/baseline and [Low, High] its interval (NaN: none).
	Ratio, Low, High float64
	Margin           float64
	HigherIsBetter   bool
}

type gateSection struct {
	GateMetric
	Class string
	Figs  []figure
}

var gateTmpl = mustPage(`<h1>{{.Title}}</h1>
<p class="sub">{{.Headline}}</p>
{{if .Where}}<pre>{{range .Where}}{{.}}
{{end}}</pre>{{end}}
<p class="sub">Each dot is one run's statistic (the run is the unit of replication). The interval is the ratio current/baseline of the runs' geometric means at the level the gate used; the shaded band is ±δ. Regressed: the interval excludes no change and the ratio is worse by at least δ. No regression: the interval's worse end is within δ. Otherwise inconclusive.</p>
{{range .Sections}}<h2 id="{{.Name}}">{{.Name}}{{if not .Gating}} <span class="unit">(reported only)</span>{{end}}</h2>
<p class="{{.Class}}">{{.Verdict}}</p>
{{template "figs" .Figs}}
{{end}}`)

// WriteGateReport writes the gate's HTML report: the answer, where each side ran, and
// per metric a dot plot of every baseline and current run, and the ratio's interval
// against the δ band.
func WriteGateReport(w io.Writer, r GateReport) error {
	data := struct {
		Title, Headline string
		Where           []string
		Sections        []gateSection
		CSS             template.CSS
	}{Title: r.Title, Headline: r.Headline, Where: r.Where, CSS: css}
	for _, m := range r.Metrics {
		s := gateSection{GateMetric: m, Class: "pass"}
		switch {
		case !m.Pass:
			s.Class = "fail"
		case m.Change == "inconclusive" || !m.Gating && m.Change == "regressed":
			s.Class = "warn"
		}
		id := strings.NewReplacer(" ", "-", "/", "-").Replace(m.Name)
		s.Figs = []figure{
			{ID: id + "-runs", SVG: template.HTML(runDotsSVG(m)), Caption: fmt.Sprintf("%d baseline and %d current runs", len(m.Baseline), len(m.Current))},
			{ID: id + "-ratio", SVG: template.HTML(ratioSVG(m)), Caption: ratioCaption(m)},
		}
		data.Sections = append(data.Sections, s)
	}
	return render(w, gateTmpl, data)
}

// scaleUnit returns a display scale and label: seconds are drawn in ms, fractions in %.
func scaleUnit(u string) (float64, string) {
	switch u {
	case "s":
		return 1000, "ms"
	case "%":
		return 100, "%"
	}
	return 1, u
}

// runDotsSVG draws each run as a dot on one row per side.
func runDotsSVG(m GateMetric) string {
	k, label := scaleUnit(m.Unit)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, xs := range [][]float64{m.Baseline, m.Current} {
		for _, x := range xs {
			lo, hi = min(lo, x*k), max(hi, x*k)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	pad := (hi - lo) * 0.1
	if pad == 0 {
		pad = math.Max(math.Abs(hi)*0.05, 1e-9)
	}
	f := newFrame(520, 150, lo-pad, hi+pad, 0, 3)
	f.left = 78
	var b strings.Builder
	title := m.Name + ": every run"
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg dots" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s"><title>%s</title>`,
		c(f.w), c(f.h), c(f.w), c(f.h), esc(title), esc(title))
	fmt.Fprintf(&b, `<text class="ttl" x="%s" y="16" text-anchor="middle">%s</text>`, c(f.w/2), esc(title))
	for _, t := range niceTicks(f.x0, f.x1, 6) {
		x := f.px(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(x), c(f.top), c(x), c(f.h-f.bottom))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, c(x), c(f.h-f.bottom+15), fmtTick(t))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(f.left), c(f.h-f.bottom), c(f.w-f.right), c(f.h-f.bottom))
	fmt.Fprintf(&b, `<text class="lbl" x="%s" y="%s" text-anchor="middle">%s</text>`, c((f.left+f.w-f.right)/2), c(f.h-6), esc(label))
	for i, side := range []struct {
		name  string
		xs    []float64
		color string
	}{{"baseline", m.Baseline, palette[0]}, {"current", m.Current, palette[1]}} {
		row := 2.0 - float64(i)
		y := f.py(row)
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, c(f.left-6), c(y+3), side.name)
		for j, x := range side.xs {
			dy := (float64(j%5) - 2) * 3 // a little spread, so equal runs stay visible
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="%s" fill-opacity="0.7"><title>%s run %d: %s %s</title></circle>`,
				c(f.px(x*k)), c(y+dy), side.color, side.name, j+1, fmtTick(x*k), esc(label))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// ratioSVG draws the ratio's interval (as a change in %) against the ±δ band.
func ratioSVG(m GateMetric) string {
	pct := func(r float64) float64 { return (r - 1) * 100 }
	d := m.Margin * 100
	lo, hi := -2*d, 2*d
	for _, x := range []float64{m.Ratio, m.Low, m.High} {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = min(lo, pct(x)), max(hi, pct(x))
		}
	}
	lo, hi = math.Max(lo, -100), math.Min(hi, 400) // an interval wider than this is shown cut
	pad := (hi - lo) * 0.05
	f := newFrame(520, 110, lo-pad, hi+pad, 0, 2)
	var b strings.Builder
	title := m.Name + ": change vs baseline"
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg ratio" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s"><title>%s</title>`,
		c(f.w), c(f.h), c(f.w), c(f.h), esc(title), esc(title))
	fmt.Fprintf(&b, `<text class="ttl" x="%s" y="16" text-anchor="middle">%s</text>`, c(f.w/2), esc(title))
	fmt.Fprintf(&b, `<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="#2ca02c" fill-opacity="0.12"><title>±δ = ±%s%%</title></rect>`,
		c(f.px(-d)), c(f.top), c(f.px(d)-f.px(-d)), c(f.h-f.bottom-f.top), fmtTick(d))
	for _, t := range niceTicks(f.x0, f.x1, 6) {
		x := f.px(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(x), c(f.top), c(x), c(f.h-f.bottom))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s%%</text>`, c(x), c(f.h-f.bottom+15), fmtTick(t))
	}
	fmt.Fprintf(&b, `<line class="axis zero" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(f.px(0)), c(f.top), c(f.px(0)), c(f.h-f.bottom))
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, c(f.left), c(f.h-f.bottom), c(f.w-f.right), c(f.h-f.bottom))
	worse := "higher is worse"
	if m.HigherIsBetter {
		worse = "lower is worse"
	}
	fmt.Fprintf(&b, `<text class="lbl" x="%s" y="%s" text-anchor="middle">current vs baseline, %% (%s)</text>`, c((f.left+f.w-f.right)/2), c(f.h-6), worse)
	y := f.py(1)
	color := "#1a7f37"
	if !m.Pass {
		color = errorColor
	} else if m.Change == "inconclusive" {
		color = "#a36400"
	}
	clamp := func(x float64) float64 { return math.Max(f.x0, math.Min(f.x1, x)) }
	if !math.IsNaN(m.Low) && !math.IsNaN(m.High) {
		fmt.Fprintf(&b, `<line class="ci" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"><title>interval %s%% to %s%%</title></line>`,
			c(f.px(clamp(pct(m.Low)))), c(y), c(f.px(clamp(pct(m.High)))), c(y), color, fmtTick(pct(m.Low)), fmtTick(pct(m.High)))
	}
	if !math.IsNaN(m.Ratio) {
		fmt.Fprintf(&b, `<circle class="est" cx="%s" cy="%s" r="5" fill="%s"><title>ratio %s (%+.2f%%)</title></circle>`,
			c(f.px(clamp(pct(m.Ratio)))), c(y), color, fmtTick(m.Ratio), pct(m.Ratio))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func ratioCaption(m GateMetric) string {
	if math.IsNaN(m.Low) {
		return fmt.Sprintf("ratio %.4g, no interval (between-run noise not measured); δ = %s%%", m.Ratio, fmtTick(m.Margin*100))
	}
	return fmt.Sprintf("ratio %.4g, interval [%.4g, %.4g]; δ = %s%%: %s", m.Ratio, m.Low, m.High, fmtTick(m.Margin*100), m.Change)
}
