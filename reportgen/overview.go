package reportgen

import (
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/record"
)

// The run report opens with an overview that fits one screen (1280×800, and a phone's
// 390×844 without sideways scrolling): the run's answer, the five numbers that matter
// and the charts over time. Everything else follows below it.

// OverviewNumber is one of the numbers a run report's overview shows: a metric of the
// catalogue (record.Metric…) and, for a distribution, its statistic.
type OverviewNumber struct {
	// Metric is the catalogue name, e.g. record.MetricTTFT.
	Metric string
	// Stat is the statistic of a distribution metric ("p99"); "" for a single value
	// (a throughput, a rate).
	Stat string
	// Label is how the overview names it.
	Label string
}

// OverviewNumbers are the five numbers that matter, in the order the run report's
// overview shows them: the tails a user feels (time to first token, inter-token
// latency and request latency, each at p99), what the server delivered (output token
// throughput) and what failed (error rate). Each is metrics.json's value.
var OverviewNumbers = []OverviewNumber{
	{Metric: record.MetricTTFT, Stat: "p99", Label: "TTFT p99"},
	{Metric: record.MetricITL, Stat: "p99", Label: "ITL p99"},
	{Metric: record.MetricRequestLatency, Stat: "p99", Label: "Request latency p99"},
	{Metric: record.MetricOutputTokenThroughput, Label: "Output token throughput"},
	{Metric: record.MetricErrorRate, Label: "Error rate"},
}

// Value returns the number's value in m (in the metric's unit, a ratio for the error
// rate) and whether m has it.
func (n OverviewNumber) Value(m record.Metrics) (float64, bool) {
	var v float64
	if n.Stat == "" {
		s, ok := m.Scalars[n.Metric]
		if !ok {
			return 0, false
		}
		v = s.Value
	} else {
		s, ok := m.Stats[n.Metric]
		if !ok || s.Count == 0 {
			return 0, false
		}
		v = statValue(s, n.Stat)
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// overviewTile is one number as the page shows it; Raw is the exact value (the data-value
// attribute a test compares with metrics.json), "" when the run has none.
type overviewTile struct {
	Metric, Stat, Label, Text, Unit, Raw string
}

func overviewTiles(m record.Metrics) []overviewTile {
	out := make([]overviewTile, 0, len(OverviewNumbers))
	for _, n := range OverviewNumbers {
		t := overviewTile{Metric: n.Metric, Stat: n.Stat, Label: n.Label, Text: "N/A"}
		unit := ""
		if s, ok := m.Stats[n.Metric]; ok {
			unit = s.Unit
		} else if s, ok := m.Scalars[n.Metric]; ok {
			unit = s.Unit
		}
		if v, ok := n.Value(m); ok {
			t.Raw = strconv.FormatFloat(v, 'g', -1, 64)
			t.Text, t.Unit = num(v), aiperfUnit(unit)
			if unit == "ratio" { // a fraction, shown as a percentage
				t.Text, t.Unit = num(100*v), "%"
			}
		}
		out = append(out, t)
	}
	return out
}

// overviewPage is the overview's data: the answer (mark and sentence, as the caller's
// console and markdown summary give it), the tiles and the charts over time.
type overviewPage struct {
	Mark, Rest, Class string
	Numbers           []overviewTile
	Charts            []figure
}

// newOverview builds the overview from the answer, the metrics and the charts.
func newOverview(mark, headline string, m record.Metrics, charts []figure) overviewPage {
	o := overviewPage{Numbers: overviewTiles(m), Charts: charts}
	if headline != "" || mark != "" {
		o.Mark, o.Rest = mark, headline
		if mark != "" && strings.HasPrefix(headline, mark) {
			o.Rest = strings.TrimLeft(strings.TrimPrefix(headline, mark), ": ")
		}
		switch mark {
		case "PASS":
			o.Class = "pass"
		case "INCONCLUSIVE", "WARN":
			o.Class = "warn"
		default:
			o.Class = "fail"
		}
	}
	return o
}

// overviewTmpl is the overview's markup, a "overview" template of the run page.
const overviewTmpl = `{{define "overview"}}<section id="overview" data-section="Overview">
{{if or .Mark .Rest}}<p id="answer" class="answer {{.Class}}-a"><b class="{{.Class}}">{{.Mark}}</b> {{.Rest}}</p>{{end}}
<div id="numbers">{{range .Numbers}}<div class="num" data-metric="{{.Metric}}"{{with .Stat}} data-stat="{{.}}"{{end}}{{with .Raw}} data-value="{{.}}"{{end}}><span class="k">{{.Label}}</span><span class="v">{{.Text}}</span>{{with .Unit}} <span class="unit">{{.}}</span>{{end}}</div>{{end}}</div>
{{template "figs" .Charts}}
</section>{{end}}`

// overviewCSS lays the overview out: tiles in a row that wraps, the charts two a row
// at a height that keeps the whole overview on a 1280×800 screen; on a narrow screen
// tables scroll inside themselves instead of widening the page.
const overviewCSS = `
#overview{margin:0 0 8px}
.answer{font-size:15px;background:#fff;border:1px solid var(--line);border-left-width:5px;border-radius:4px;padding:6px 12px;margin:0 0 10px;overflow-wrap:anywhere}
.pass-a{border-left-color:#1a7f37}.fail-a{border-left-color:#c62828}.warn-a{border-left-color:#a36400}
#numbers{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 10px}
.num{background:#fff;border:1px solid var(--line);border-radius:6px;padding:5px 12px;flex:1 1 150px;min-width:0}
.num .k{display:block;color:var(--muted);font-size:12px}
.num .v{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}
#overview figure.chart svg{max-height:205px}
figure.chart{min-width:0}
h1,.sub{overflow-wrap:anywhere}
@media (max-width:700px){
body{padding:12px}
table{display:block;max-width:100%;overflow-x:auto}
#overview figure.chart{flex-basis:100%}
}
`

// runCSS is the run report's style sheet: every report's, and the overview's.
var runCSS = template.CSS(pageCSS + overviewCSS)
