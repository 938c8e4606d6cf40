package reportgen

import (
	"bytes"
	"html/template"
	"maps"
	"slices"

	"github.com/perfgate/perfgate/record"
)

// classSection is report.html's "Per class" section of a run of several traffic
// classes (record.Metrics.Classes; docs/classes.md): a table of the classes side by
// side (requests, errors, throughputs, TTFT, latency and ITL), then each class's own
// summary table and run-level counts, as the run's are shown above them. Empty for a
// run of one class.
type classSection struct {
	Rows    []modelRow // a row per class, by name (Model is the class's name)
	Classes []classDetail
}

// classDetail is one class's summary: its per-request rows and run-level counts.
type classDetail struct {
	Name   string
	Rows   []statRow
	Counts []kv
}

var classTmpl = template.Must(template.New("classes").Parse(`<h2 id="classes">Per class</h2>
<p class="sub">Each traffic class's requests alone, measured on the run's one clock: rules scoped <code>{class=NAME}</code> and the regression gate's statistics <code>ttft_p99{class=NAME}</code> judge these.</p>
<table id="classes-table"><thead><tr><th class="l">class</th><th>requests</th><th>errors</th><th>requests/s</th><th>output tokens/s</th><th>TTFT p50 (ms)</th><th>TTFT p99 (ms)</th><th>latency p50 (ms)</th><th>latency p99 (ms)</th><th>ITL p50 (ms)</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="l">{{.Model}}</td><td>{{.Requests}}</td><td>{{.Errors}}</td><td>{{.ReqS}}</td><td>{{.TokS}}</td><td>{{.TTFT50}}</td><td>{{.TTFT99}}</td><td>{{.Lat50}}</td><td>{{.Lat99}}</td><td>{{.ITL50}}</td></tr>
{{end}}</tbody></table>
{{range .Classes}}<details class="class" id="class-{{.Name}}"><summary>class {{.Name}}</summary>
<table><thead><tr><th class="l">metric</th><th>n</th><th>avg</th><th>min</th><th>max</th><th>p99</th><th>p90</th><th>p50</th><th>std</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="l">{{.Name}} ({{.Unit}})</td><td>{{.N}}</td><td>{{.Avg}}</td><td>{{.Min}}</td><td>{{.Max}}</td><td>{{.P99}}</td><td>{{.P90}}</td><td>{{.P50}}</td><td>{{.Std}}</td></tr>
{{end}}</tbody></table>
<table><tbody>{{range .Counts}}<tr><th class="l">{{.K}}</th><td>{{.V}}</td></tr>{{end}}</tbody></table>
</details>
{{end}}`))

// classesHTML renders m's "Per class" section; "" for a run of one class.
func classesHTML(m record.Metrics) (template.HTML, error) {
	if len(m.Classes) == 0 {
		return "", nil
	}
	sec := classSection{Rows: breakdownRows(m.Classes)}
	for _, n := range slices.Sorted(maps.Keys(m.Classes)) {
		rows, counts := metricRows(m.Classes[n])
		sec.Classes = append(sec.Classes, classDetail{Name: n, Rows: rows, Counts: counts})
	}
	var b bytes.Buffer
	if err := classTmpl.Execute(&b, sec); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}
