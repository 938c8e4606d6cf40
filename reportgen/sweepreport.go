package reportgen

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

// SweepReportFile is the file name the CLI gives [WriteSweepReport]'s output.
const SweepReportFile = "sweep.html"

type sweepRow struct {
	Load, ReqS, TokS, Goodput, TTFT50, TTFT99, ITL50, ITL99, Errors string
	Pass, Skipped                                                   bool
	Note, Link                                                      string
}

type sweepPage struct {
	Title, Subtitle string
	CSS             template.CSS
	LoadName        string
	Figures         []figure
	Rows            []sweepRow
}

var sweepTmpl = mustPage(`<h1>{{.Title}}</h1><p class="sub">{{.Subtitle}}</p>
{{template "figs" .Figures}}
<h2>Runs</h2>
<table id="sweep"><thead><tr><th>{{.LoadName}}</th><th>req/s</th><th>output tok/s</th><th>goodput req/s</th><th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>ITL p50 ms</th><th>ITL p99 ms</th><th>errors</th><th class="l">verdict</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{if .Link}}<a href="{{.Link}}">{{.Load}}</a>{{else}}{{.Load}}{{end}}</td><td>{{.ReqS}}</td><td>{{.TokS}}</td><td>{{.Goodput}}</td><td>{{.TTFT50}}</td><td>{{.TTFT99}}</td><td>{{.ITL50}}</td><td>{{.ITL99}}</td><td>{{.Errors}}</td><td class="l">{{if .Skipped}}<span class="warn">SKIPPED</span>{{else if .Pass}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}} {{.Note}}</td></tr>
{{end}}</tbody></table>
`)

// WriteSweepReport writes the HTML report of a sweep, search or repeated run:
// throughput, goodput, TTFT and ITL (p50, p99) against the load, the latency–throughput
// charts (TTFT and ITL against output tokens/s and requests/s, tokens/s per user against
// the total; the Pareto frontier marked, the goodput SLO drawn, run-to-run intervals
// when a load repeats), and a table of every run with its verdict and a link to its
// own report (when the point's Dir is under dir, the directory the report is written
// to; "" = no links). Repeats at one load are averaged in the charts.
func WriteSweepReport(w io.Writer, dir, title, loadName string, points []sweep.Point) error {
	if len(points) == 0 {
		return fmt.Errorf("reportgen: sweep report: no points")
	}
	p := sweepPage{Title: cmp.Or(title, "perfgate sweep"), CSS: css, LoadName: loadName}
	passed, skipped := 0, 0
	for _, pt := range points {
		if pt.Pass {
			passed++
		}
		if pt.Skipped != "" {
			skipped++
		}
	}
	p.Subtitle = fmt.Sprintf("%d runs, %d passed every assertion", len(points)-skipped, passed)
	if skipped > 0 {
		p.Subtitle += fmt.Sprintf("; %d skipped (a lower load was over-saturated)", skipped)
	}
	all := points
	points = slices.DeleteFunc(slices.Clone(points), func(pt sweep.Point) bool { return pt.Skipped != "" }) // the charts: runs only
	// Average repeats per load, in load order.
	type agg struct {
		n                                  float64
		req, tok, good, t50, t99, i50, i99 float64
	}
	byLoad := map[float64]*agg{}
	var loads []float64
	add := func(a *float64, v float64) {
		if !math.IsNaN(v) {
			*a += v
		} else {
			*a = math.NaN()
		}
	}
	for _, pt := range points {
		a := byLoad[pt.Load]
		if a == nil {
			a = &agg{}
			byLoad[pt.Load] = a
			loads = append(loads, pt.Load)
		}
		a.n++
		m := pt.Metrics
		add(&a.req, metricScalar(m, record.MetricRequestThroughput))
		add(&a.tok, metricScalar(m, record.MetricOutputTokenThroughput))
		add(&a.good, metricScalar(m, record.MetricGoodput))
		add(&a.t50, metricQuantile(m, record.MetricTTFT, 0.5))
		add(&a.t99, metricQuantile(m, record.MetricTTFT, 0.99))
		add(&a.i50, metricQuantile(m, record.MetricITL, 0.5))
		add(&a.i99, metricQuantile(m, record.MetricITL, 0.99))
	}
	slices.Sort(loads)
	col := func(f func(*agg) float64) []float64 {
		out := make([]float64, len(loads))
		for i, l := range loads {
			a := byLoad[l]
			out[i] = f(a) / a.n
		}
		return out
	}
	req := col(func(a *agg) float64 { return a.req })
	good := col(func(a *agg) float64 { return a.good })
	tok := col(func(a *agg) float64 { return a.tok })
	t50, t99 := col(func(a *agg) float64 { return a.t50 }), col(func(a *agg) float64 { return a.t99 })
	i50, i99 := col(func(a *agg) float64 { return a.i50 }), col(func(a *agg) float64 { return a.i99 })
	tput := []series{{"requests/s", loads, req}}
	if !allNaN(good) {
		tput = append(tput, series{"goodput requests/s", loads, good})
	}
	p.Figures = []figure{
		{ID: "sweep-throughput", SVG: template.HTML(lineSVG("Request throughput", loadName, "requests/s", tput))},
		{ID: "sweep-tokens", SVG: template.HTML(lineSVG("Output token throughput", loadName, "tokens/s", []series{{"tokens/s", loads, tok}}))},
		{ID: "sweep-ttft", SVG: template.HTML(lineSVG("Time to first token", loadName, "ms", []series{{"p50", loads, t50}, {"p99", loads, t99}}))},
		{ID: "sweep-itl", SVG: template.HTML(lineSVG("Inter-token latency", loadName, "ms", []series{{"p50", loads, i50}, {"p99", loads, i99}}))},
	}
	p.Figures = append(p.Figures, paretoFigures(loadName, points)...)
	for _, pt := range all {
		if pt.Skipped != "" {
			p.Rows = append(p.Rows, sweepRow{Load: fmt.Sprintf("%g", pt.Load), ReqS: "-", TokS: "-", Goodput: "-", TTFT50: "-", TTFT99: "-", ITL50: "-", ITL99: "-", Errors: "-", Skipped: true, Note: pt.Skipped})
			continue
		}
		m := pt.Metrics
		r := sweepRow{Load: fmt.Sprintf("%g", pt.Load), ReqS: num(metricScalar(m, record.MetricRequestThroughput)), TokS: num(metricScalar(m, record.MetricOutputTokenThroughput)),
			Goodput: num(metricScalar(m, record.MetricGoodput)), TTFT50: num(metricQuantile(m, record.MetricTTFT, 0.5)), TTFT99: num(metricQuantile(m, record.MetricTTFT, 0.99)),
			ITL50: num(metricQuantile(m, record.MetricITL, 0.5)), ITL99: num(metricQuantile(m, record.MetricITL, 0.99)),
			Errors: fmt.Sprint(int64(scalar0(m, record.MetricErrorCount))), Pass: pt.Pass, Note: pt.Note}
		if dir != "" && pt.Dir != "" {
			if rel, err := filepath.Rel(dir, filepath.Join(pt.Dir, RunReportFile)); err == nil && !filepath.IsAbs(rel) {
				r.Link = filepath.ToSlash(rel)
			}
		}
		p.Rows = append(p.Rows, r)
	}
	return render(w, sweepTmpl, p)
}

func scalar0(m record.Metrics, name string) float64 { return m.Scalars[name].Value }

func allNaN(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// metricQuantile is the q-quantile of a run's metric, NaN when the run has none.
func metricQuantile(m record.Metrics, name string, q float64) float64 {
	s, ok := m.Stats[name]
	if !ok || s.Count == 0 {
		return math.NaN()
	}
	v, _ := s.Quantile(q)
	return v
}

// metricScalar is a run's scalar metric, NaN when the run has none.
func metricScalar(m record.Metrics, name string) float64 {
	if s, ok := m.Scalars[name]; ok {
		return s.Value
	}
	return math.NaN()
}
