package reportgen

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// RunReportOptions tunes [WriteRunReport]. The zero value is ready to use.
type RunReportOptions struct {
	// Title is the page title; "" = "perfgate run report".
	Title string
	// TimeSlice is the width of the over-time buckets; 0 picks a round width giving
	// at most about 30 slices.
	TimeSlice time.Duration
	// Metrics, when set, fills the summary tables (the same numbers as the console
	// table and the exports); nil computes a summary from the records.
	Metrics *record.Metrics
	// Verdicts are the run's assertion outcomes, shown first (failed ones first).
	Verdicts []Verdict
	// ServerMetrics, when set, adds a "Server metrics" section: per scraped URL the
	// scrape counts, the derived figures, and the counter deltas and gauge statistics.
	ServerMetrics *servermetrics.Summary
	// Lengths adds the server's counts, the checked lengths and the configured
	// targets to the "Input and output lengths" section; nil draws the client's
	// counts only.
	Lengths *RunLengths
	// PrefixCache, when set, adds the ideal hit rate to the "Prefix cache" section
	// (metrics.json's "prefix_cache", loadgen's counts); the section draws the
	// measured rate from the records alone when it is nil. See prefixSection.
	PrefixCache *record.PrefixCacheIdeal
	// Mark and Headline are the run's answer, as the console and the markdown summary
	// give it (the mark PASS, FAIL, INVALID …; the one sentence, which may start with
	// the mark): the first line of the overview. Both "" = no answer line.
	Mark, Headline string
	// GPU, when set, adds a "GPU telemetry" section: each GPU's energy, power,
	// utilisation and memory over the measured window, and the run's efficiencies
	// (gpu_telemetry.json, [servermetrics.GPUSummary]).
	GPU *servermetrics.GPUSummary
}

// Verdict is one assertion outcome as the report shows it: pass or fail and its text
// (perftest/check.Verdict.String(): the verdict line, then the evidence).
type Verdict struct {
	Pass bool
	Text string
}

// metricRows turns metrics into the report's summary rows (every distribution metric
// present, in the console's order) and single values.
func metricRows(m record.Metrics) ([]statRow, []kv) {
	var rows []statRow
	for _, n := range statNames(m) {
		s := m.Stats[n]
		rows = append(rows, statRow{Name: info(n).Header, Unit: aiperfUnit(s.Unit), N: s.Count, Counts: countNoun(n), Avg: num(s.Avg), Min: num(s.Min), Max: num(s.Max),
			P50: num(s.P50), P90: num(s.P90), P99: num(s.P99), Std: num(s.Std)})
	}
	var counts []kv
	for _, n := range scalarNames(m) {
		s := m.Scalars[n]
		v := num(s.Value)
		if n == record.MetricRequestCount || n == record.MetricErrorCount || n == record.MetricGoodRequestCount {
			v = fmt.Sprint(int64(s.Value))
		}
		counts = append(counts, kv{label(info(n).Header, s.Unit), v})
	}
	return rows, counts
}

// splitHTTPRows moves the HTTP phases' rows (their headers start "HTTP ") out of
// the summary rows, into a section of their own.
func splitHTTPRows(rows []statRow) (summary, http []statRow) {
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "HTTP ") {
			http = append(http, r)
		} else {
			summary = append(summary, r)
		}
	}
	return summary, http
}

// perRequest holds the per-request series of a run that the charts need, warmup excluded.
type perRequest struct {
	start, end             time.Duration // first Sent, last Done
	warmStart, warmEnd     time.Duration // the warm-up requests' first Sent and last Done; -1 = none
	latency, ttft, itl     []float64     // ms, successful requests
	sentS                  []float64     // seconds since run start, aligned with ttftAt/itlAt
	ttftAt, itlAt          []float64     // ttft/itl by send time (NaN when absent)
	doneS                  []float64     // completion time of successful requests
	errAt                  []float64     // completion time of failed requests
	errKinds               map[string]int
	errSamples             map[string]string
	chunkT                 []float64 // seconds; with chunkTok: output tokens over time
	chunkTok               []float64
	isl, osl               []float64
	islTpl, overhead       []float64      // requests whose chat-template overhead the client counted
	tplModes               map[string]int // their tokenization modes
	prefix                 prefixData     // the "Prefix cache" section's
	requests, ok, failures int
}

// collect derives every value with [metric.Request.Reset] under opt.
func collect(each func(func(*record.Client) error) error, opt metric.Options) perRequest {
	p := perRequest{errKinds: map[string]int{}, errSamples: map[string]string{}, tplModes: map[string]int{}, start: -1, warmStart: -1, warmEnd: -1}
	var q metric.Request
	var tb tokenBins
	_ = each(func(r *record.Client) error {
		q.Reset(r, opt)
		if r.Warmup {
			if p.warmStart < 0 || r.Sent < p.warmStart {
				p.warmStart = r.Sent
			}
			p.warmEnd = max(p.warmEnd, r.Done)
			return nil
		}
		p.requests++
		if p.start < 0 || r.Sent < p.start {
			p.start = r.Sent
		}
		p.end = max(p.end, r.Done)
		if !r.OK() {
			p.failures++
			p.errAt = append(p.errAt, r.Done.Seconds())
			k := r.ErrorKind
			if r.Status != 0 && k == record.ErrHTTPStatus {
				k = fmt.Sprintf("%s %d", k, r.Status)
			}
			p.errKinds[k]++
			if _, ok := p.errSamples[k]; !ok {
				p.errSamples[k] = r.Error
			}
			return nil
		}
		p.ok++
		p.latency = append(p.latency, metric.MS(q.Latency))
		p.isl = append(p.isl, float64(q.ISL))
		p.osl = append(p.osl, float64(q.OSL))
		if n, ok := r.TemplateOverhead(); ok {
			p.overhead = append(p.overhead, float64(n))
			p.islTpl = append(p.islTpl, float64(r.ISLTemplate))
			p.tplModes[r.TokenizationMode]++
		}
		p.doneS = append(p.doneS, r.Done.Seconds())
		p.sentS = append(p.sentS, r.Sent.Seconds())
		p.prefix.add(r)
		ttft, itl := math.NaN(), math.NaN()
		if q.HasTTFT {
			ttft = metric.MS(q.TTFT)
			p.ttft = append(p.ttft, ttft)
		}
		if v, ok := q.ITL(); ok {
			itl = v
			p.itl = append(p.itl, itl)
		}
		p.ttftAt = append(p.ttftAt, ttft)
		p.itlAt = append(p.itlAt, itl)
		for _, ch := range r.Chunks {
			if ch.Tokens > 0 {
				tb.add(ch.T, ch.Tokens)
			}
		}
		return nil
	})
	if p.start < 0 {
		p.start = 0
	}
	p.chunkT, p.chunkTok = tb.pairs()
	return p
}

// tokenBins sums output tokens over time in bins of width (1 ms at first, doubled
// whenever a run outgrows maxTokenBins), so the token-rate chart costs memory by the
// run's length, not by its chunk count: a chart slice is at least 100 ms wide.
type tokenBins struct {
	width time.Duration
	sums  []float64
}

const maxTokenBins = 1 << 22 // 4M bins: 70 minutes at 1 ms, 32 MB

func (b *tokenBins) add(t time.Duration, tokens int) {
	if b.width == 0 {
		b.width = time.Millisecond
	}
	t = max(t, 0)
	k := int(t / b.width)
	for k >= maxTokenBins {
		for i := 0; i < len(b.sums); i += 2 { // fold pairs: double the width
			v := b.sums[i]
			if i+1 < len(b.sums) {
				v += b.sums[i+1]
			}
			b.sums[i/2] = v
		}
		b.sums = b.sums[:(len(b.sums)+1)/2]
		b.width *= 2
		k = int(t / b.width)
	}
	if k >= len(b.sums) {
		b.sums = append(b.sums, make([]float64, k+1-len(b.sums))...)
	}
	b.sums[k] += float64(tokens)
}

// pairs returns each non-empty bin as (its middle, in seconds; its tokens).
func (b *tokenBins) pairs() (ts, toks []float64) {
	for k, v := range b.sums {
		if v > 0 {
			ts = append(ts, (time.Duration(k)*b.width + b.width/2).Seconds())
			toks = append(toks, v)
		}
	}
	return ts, toks
}

// sliceWidth returns the over-time bucket width in seconds for a run of the given span.
func sliceWidth(span time.Duration, want time.Duration) float64 {
	if want > 0 {
		return want.Seconds()
	}
	s := span.Seconds()
	if s <= 0 {
		return 1
	}
	for _, w := range []float64{0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600} {
		if s/w <= 30 {
			return w
		}
	}
	return math.Ceil(s/30/3600) * 3600
}

// sliced groups values by bucket of t (seconds since start, width w) and applies f
// to each non-empty bucket; empty buckets yield NaN.
func sliced(t, v []float64, start, w float64, n int, f func([]float64) float64) []float64 {
	groups := make([][]float64, n)
	for i := range t {
		if math.IsNaN(v[i]) {
			continue
		}
		k := int((t[i] - start) / w)
		if k < 0 || k >= n {
			k = min(max(k, 0), n-1)
		}
		groups[k] = append(groups[k], v[i])
	}
	out := make([]float64, n)
	for k, g := range groups {
		if len(g) == 0 {
			out[k] = math.NaN()
			continue
		}
		out[k] = f(g)
	}
	return out
}

func quantileOf(p float64) func([]float64) float64 {
	return func(g []float64) float64 {
		return metric.Quantile(g, p)
	}
}

func sumOf(g []float64) float64 {
	var s float64
	for _, x := range g {
		s += x
	}
	return s
}

type statRow struct {
	Name, Unit                        string
	Counts                            string // what N counts ("requests", "gaps between chunks")
	N                                 int
	Avg, Min, Max, P50, P90, P99, Std string
}

// modelRow is one model's row of a model mix's "Per model" table.
type modelRow struct {
	Model, Requests, Errors, ReqS, TokS, TTFT50, TTFT99, Lat50, Lat99, ITL50 string
}

// modelRows returns the per-model rows of m, by model name; none for one model.
func modelRows(m record.Metrics) []modelRow { return breakdownRows(m.Models) }

// breakdownRows returns a row for each part of a run's breakdown (its models, its
// classes), by name.
func breakdownRows(parts map[string]record.Metrics) []modelRow {
	names := slices.Sorted(maps.Keys(parts))
	out := make([]modelRow, 0, len(names))
	stat := func(mm record.Metrics, name string, p func(record.Stat) float64) string {
		if s, ok := mm.Stats[name]; ok {
			return num(p(s))
		}
		return "–"
	}
	for _, n := range names {
		mm := parts[n]
		out = append(out, modelRow{Model: n,
			Requests: fmt.Sprint(int64(mm.Value(record.MetricRequestCount))), Errors: fmt.Sprint(int64(mm.Value(record.MetricErrorCount))),
			ReqS: num(mm.Value(record.MetricRequestThroughput)), TokS: num(mm.Value(record.MetricOutputTokenThroughput)),
			TTFT50: stat(mm, record.MetricTTFT, func(s record.Stat) float64 { return s.P50 }), TTFT99: stat(mm, record.MetricTTFT, func(s record.Stat) float64 { return s.P99 }),
			Lat50: stat(mm, record.MetricRequestLatency, func(s record.Stat) float64 { return s.P50 }), Lat99: stat(mm, record.MetricRequestLatency, func(s record.Stat) float64 { return s.P99 }),
			ITL50: stat(mm, record.MetricITL, func(s record.Stat) float64 { return s.P50 })})
	}
	return out
}

type errRow struct {
	Kind, Example string
	Count         int
}

type runPage struct {
	Title, Subtitle string
	CSS             template.CSS
	Manifest        *Manifest
	Rows            []statRow
	Counts          []kv
	Models          []modelRow    // a model mix's per-model figures (record.Metrics.Models)
	Classes         template.HTML // a run of classes' "Per class" section (classes.go)
	Lengths         lengthsPage
	Overview        overviewPage // the first screen: the answer, OverviewNumbers, the charts over time
	Latency         []figure
	Errors          []figure
	ErrRows         []errRow
	Verdicts        []Verdict
	Passed, Failed  int
	Server          []serverSection
	HTTP            []statRow   // the HTTP phases' rows (AIPerf's http_req_*), apart from the summary
	Prefix          *prefixPage // the "Prefix cache" section; nil = none
	Jobs            *jobsPage   // the "Jobs and turns" section (jobs.go); nil = none
	GPU             *gpuPage    // the "GPU telemetry" section; nil = none
}

// serverSection is one scraped URL in the report.
type serverSection struct {
	URL      string
	Derived  []kv
	Errors   []string
	Counters []kv // name{labels}, delta
	Gauges   [][5]string
}

func serverSections(s *servermetrics.Summary) []serverSection {
	if s == nil {
		return nil
	}
	var out []serverSection
	for _, e := range s.Endpoints {
		sec := serverSection{URL: e.URL, Errors: e.Errors}
		for _, l := range e.Lines() {
			sec.Derived = append(sec.Derived, kv{l[0], l[1]})
		}
		for _, c := range e.Counters {
			sec.Counters = append(sec.Counters, kv{seriesName(c.Name, c.Labels), num(c.Delta)})
		}
		for _, h := range e.Histograms {
			sec.Counters = append(sec.Counters, kv{seriesName(h.Name, h.Labels) + " (count, mean)", num(h.Count) + ", " + num(h.Mean)})
		}
		for _, g := range e.Gauges {
			sec.Gauges = append(sec.Gauges, [5]string{seriesName(g.Name, g.Labels), fmt.Sprint(g.N), num(g.Mean), num(g.Min), num(g.Max)})
		}
		out = append(out, sec)
	}
	return out
}

func seriesName(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

type kv struct{ K, V string }

var runTmpl = mustPage(overviewTmpl + gpuTmpl + `<h1>{{.Title}}</h1><p class="sub">{{.Subtitle}}</p>
{{template "overview" .Overview}}
{{with .Manifest}}<table><tbody>
<tr><th class="l">perfgate</th><td class="l">{{.Version}}</td></tr>
{{if .Scenario}}<tr><th class="l">scenario</th><td class="l">{{.Scenario}}</td></tr>{{end}}
<tr><th class="l">seed</th><td class="l">{{.Seed}}</td></tr>
{{with .Tokenizer}}<tr><th class="l">tokenizer</th><td class="l">{{.Name}} <code>{{.Fingerprint}}</code></td></tr>{{end}}
<tr><th class="l">host</th><td class="l">{{.Host.Hostname}} {{.Host.OS}}/{{.Host.Arch}}, {{.Host.CPUs}} CPUs, {{.Host.GoVersion}}</td></tr>
</tbody></table>{{end}}
{{if .Verdicts}}<h2>Assertions: {{if .Failed}}<span class="fail">{{.Failed}} failed</span>, {{end}}<span class="pass">{{.Passed}} passed</span></h2>
<div id="verdicts">{{range .Verdicts}}<pre class="{{if .Pass}}pass-v{{else}}fail-v{{end}}"><b class="{{if .Pass}}pass{{else}}fail{{end}}">{{if .Pass}}PASS{{else}}FAIL{{end}}</b> {{.Text}}</pre>{{end}}</div>{{end}}
<h2>Summary</h2>
<table id="summary"><thead><tr><th class="l">metric</th><th title="how many values each row summarises, and of what">n (of what)</th><th>avg</th><th>min</th><th>max</th><th>p99</th><th>p90</th><th>p50</th><th>std</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="l">{{.Name}} ({{.Unit}})</td><td>{{.N}}{{with .Counts}} <span class="unit">{{.}}</span>{{end}}</td><td>{{.Avg}}</td><td>{{.Min}}</td><td>{{.Max}}</td><td>{{.P99}}</td><td>{{.P90}}</td><td>{{.P50}}</td><td>{{.Std}}</td></tr>
{{end}}</tbody></table>
<table id="counts"><tbody>{{range .Counts}}<tr><th class="l">{{.K}}</th><td>{{.V}}</td></tr>{{end}}</tbody></table>
{{if .Models}}<h2>Per model</h2>
<table id="models"><thead><tr><th class="l">model</th><th>requests</th><th>errors</th><th>requests/s</th><th>output tokens/s</th><th>TTFT p50 (ms)</th><th>TTFT p99 (ms)</th><th>latency p50 (ms)</th><th>latency p99 (ms)</th><th>ITL p50 (ms)</th></tr></thead><tbody>
{{range .Models}}<tr><td class="l">{{.Model}}</td><td>{{.Requests}}</td><td>{{.Errors}}</td><td>{{.ReqS}}</td><td>{{.TokS}}</td><td>{{.TTFT50}}</td><td>{{.TTFT99}}</td><td>{{.Lat50}}</td><td>{{.Lat99}}</td><td>{{.ITL50}}</td></tr>
{{end}}</tbody></table>
{{end}}{{.Classes}}{{if .HTTP}}<h2>HTTP phases</h2>
<p class="sub">Where each request's time went on the connection, as k6 and HAR name the phases and AIPerf's http_req_* metrics use them: blocked, DNS lookup and connecting (TLS handshaking included) come before the request is sent; sending, waiting (time to first byte) and receiving follow it and sum to the request latency.</p>
<table id="http-phases"><thead><tr><th class="l">phase</th><th>n</th><th>avg</th><th>min</th><th>max</th><th>p99</th><th>p90</th><th>p50</th><th>std</th></tr></thead><tbody>
{{range .HTTP}}<tr><td class="l">{{.Name}} ({{.Unit}})</td><td>{{.N}}</td><td>{{.Avg}}</td><td>{{.Min}}</td><td>{{.Max}}</td><td>{{.P99}}</td><td>{{.P90}}</td><td>{{.P50}}</td><td>{{.Std}}</td></tr>
{{end}}</tbody></table>
{{end}}<h2>Input and output lengths</h2>
{{with .Lengths}}{{if .Note}}<p class="note" id="isl-note">{{.Note}}</p>{{end}}
<table id="lengths"><thead><tr><th class="l">tokens a request</th><th class="l">counted by</th><th>n (requests)</th><th>mean</th><th>p50</th><th>min</th><th>max</th><th>std</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="l">{{.Name}}</td><td class="l">{{.By}}</td><td>{{.N}}</td><td>{{.Mean}}</td><td>{{.P50}}</td><td>{{.Min}}</td><td>{{.Max}}</td><td>{{.Std}}</td></tr>
{{end}}</tbody></table>
{{template "figs" .Figures}}{{end}}
<h2>Latency distributions</h2>
{{template "figs" .Latency}}
{{with .Prefix}}<h2>Prefix cache</h2>
<div id="prefix-cache"><p class="sub">{{.Note}}</p>
{{template "figs" .Figures}}
{{if .Ranks}}<table id="prefix-ranks"><thead><tr><th class="l">prefix rank</th><th>requests</th><th>measured hit rate</th><th>ideal hit rate</th></tr></thead><tbody>
{{range .Ranks}}<tr><td class="l">{{.Ranks}}</td><td>{{.Requests}}</td><td>{{.Measured}}</td><td>{{.Ideal}}</td></tr>{{end}}
</tbody></table>{{end}}</div>
{{end}}{{with .Jobs}}<h2>Jobs and turns</h2>
<div id="jobs"><p class="sub">{{.Note}}</p>
{{if .Rows}}<table id="job-metrics"><tbody>{{range .Rows}}<tr><th class="l">{{.K}}</th><td>{{.V}}</td></tr>{{end}}</tbody></table>{{end}}
{{template "figs" .Figures}}
{{if .Turns}}<table id="ttft-by-turn-table"><thead><tr><th class="l">turn</th><th>requests</th><th>TTFT p50 (ms)</th><th>TTFT p99 (ms)</th></tr></thead><tbody>
{{range .Turns}}<tr><td class="l">{{.Turn}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P99}}</td></tr>{{end}}
</tbody></table>{{end}}</div>
{{end}}<h2>Errors</h2>
{{if .ErrRows}}{{template "figs" .Errors}}
<table id="errors"><thead><tr><th class="l">kind</th><th>count</th><th class="l">first message</th></tr></thead><tbody>
{{range .ErrRows}}<tr><td class="l">{{.Kind}}</td><td>{{.Count}}</td><td class="l"><code>{{.Example}}</code></td></tr>{{end}}
</tbody></table>{{else}}<p class="pass" id="no-errors">No failed requests.</p>{{end}}{{with .GPU}}{{template "gpu" .}}{{end}}{{if .Server}}
<h2>Server metrics</h2>
<div id="server-metrics">{{range .Server}}<h3><code>{{.URL}}</code></h3>
<table class="server-derived"><tbody>{{range .Derived}}<tr><th class="l">{{.K}}</th><td>{{.V}}</td></tr>{{end}}</tbody></table>
{{if .Errors}}<p class="fail">Failed scrapes:</p><ul>{{range .Errors}}<li><code>{{.}}</code></li>{{end}}</ul>{{end}}
{{if .Counters}}<table class="server-counters"><thead><tr><th class="l">counter</th><th>delta over the run</th></tr></thead><tbody>{{range .Counters}}<tr><td class="l"><code>{{.K}}</code></td><td>{{.V}}</td></tr>{{end}}</tbody></table>{{end}}
{{if .Gauges}}<table class="server-gauges"><thead><tr><th class="l">gauge</th><th>n</th><th>mean</th><th>min</th><th>max</th></tr></thead><tbody>{{range .Gauges}}<tr><td class="l"><code>{{index . 0}}</code></td><td>{{index . 1}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td><td>{{index . 4}}</td></tr>{{end}}</tbody></table>{{end}}
{{end}}</div>{{end}}
`)

// WriteRunReport writes the HTML report of one run to w. It opens with an overview
// that fits one screen: the run's answer (opts.Mark, opts.Headline), the five
// [OverviewNumbers] and the charts over time (TTFT and ITL p50/p99 per time slice,
// output token and request throughput). Below it: the assertions, a summary table,
// the lengths, latency histograms and ECDFs (request latency, TTFT, ITL), an error
// timeline with the error kinds, and the GPU and server metrics when given.
// m may be nil. The page is one self-contained file: inline SVG, no scripts.
func WriteRunReport(w io.Writer, recs []record.Client, m *Manifest, opts RunReportOptions) error {
	return writeRunReport(w, sliceEach(recs), m, opts)
}

func writeRunReport(w io.Writer, each func(func(*record.Client) error) error, m *Manifest, opts RunReportOptions) error {
	mopt := metric.Options{UsageOSL: opts.Metrics != nil && opts.Metrics.OSLSource == "usage", UsageISL: opts.Metrics != nil && opts.Metrics.ISLSource == "usage", ByClass: true}
	p := collect(each, mopt)
	title := cmp.Or(opts.Title, "perfgate run report")
	// The charts over time run from the first request, warm-up included, and shade the
	// warm-up and the measured window; the series are the measured requests'.
	origin, last := p.start, p.end
	if p.warmStart >= 0 {
		origin, last = min(origin, p.warmStart), max(last, p.warmEnd)
		if p.requests == 0 {
			origin = p.warmStart
		}
	}
	width := sliceWidth(last-origin, opts.TimeSlice)
	if p.requests > 0 {
		origin = chartOrigin(origin, p.start, width)
	}
	var bands []band
	if p.warmStart >= 0 {
		bands = []band{
			{Class: "warmup", Label: "warm-up", From: (p.warmStart - origin).Seconds(), To: (p.warmEnd - origin).Seconds()},
		}
		if p.requests > 0 {
			bands = append(bands, band{Class: "measured", Label: "measured", From: (p.start - origin).Seconds(), To: (p.end - origin).Seconds()})
		}
	}
	span := last - origin
	n := max(1, int(math.Ceil(span.Seconds()/width-1e-9)))
	start := origin.Seconds()
	xs := make([]float64, n)
	for k := range xs {
		xs[k] = float64(k) * width // relative to the first request
	}
	rel := func(t []float64) []float64 {
		out := make([]float64, len(t))
		copy(out, t)
		return out
	}
	page := runPage{
		Title:    title,
		Subtitle: fmt.Sprintf("%d requests (%d ok, %d failed) over %s; time slices of %gs", p.requests, p.ok, p.failures, max(p.end-p.start, 0).Round(time.Millisecond), width),
		CSS:      runCSS,
		Manifest: m,
	}
	for _, v := range opts.Verdicts {
		if v.Pass {
			page.Passed++
		} else {
			page.Failed++
		}
	}
	page.Verdicts = slices.Clone(opts.Verdicts)
	slices.SortStableFunc(page.Verdicts, func(a, b Verdict) int {
		if a.Pass == b.Pass {
			return 0
		}
		if !a.Pass {
			return -1
		}
		return 1
	})
	page.Server = serverSections(opts.ServerMetrics)
	sum := opts.Metrics
	if sum == nil {
		a := metric.NewAccumulator(mopt)
		_ = each(func(r *record.Client) error { a.Add(r); return nil })
		m := a.Metrics()
		sum = &m
	}
	page.Rows, page.Counts = metricRows(*sum)
	page.Jobs = jobsSection(*sum)
	page.Models = modelRows(*sum)
	cls, err := classesHTML(*sum)
	if err != nil {
		return err
	}
	page.Classes = cls
	page.Rows, page.HTTP = splitHTTPRows(page.Rows)
	page.Lengths = lengthsSection(p, opts.Lengths)

	page.Latency = []figure{
		{ID: "latency-hist", SVG: template.HTML(histogramSVG("Request latency", "ms", []histSet{{"request latency", p.latency}}, 0))},
		{ID: "latency-ecdf", SVG: template.HTML(ecdfSVG("Request latency ECDF", "ms", []histSet{{"request latency", p.latency}}))},
	}
	if len(p.ttft) > 0 {
		page.Latency = append(page.Latency,
			figure{ID: "ttft-hist", SVG: template.HTML(histogramSVG("Time to first token", "ms", []histSet{{"TTFT", p.ttft}}, 0))},
			figure{ID: "ttft-ecdf", SVG: template.HTML(ecdfSVG("Time to first token ECDF", "ms", []histSet{{"TTFT", p.ttft}}))})
	}
	if len(p.itl) > 0 {
		page.Latency = append(page.Latency,
			figure{ID: "itl-hist", SVG: template.HTML(histogramSVG("Inter-token latency (per request)", "ms", []histSet{{"ITL", p.itl}}, 0))},
			figure{ID: "itl-ecdf", SVG: template.HTML(ecdfSVG("Inter-token latency ECDF", "ms", []histSet{{"ITL", p.itl}}))})
	}
	shift := func(t []float64) []float64 {
		out := rel(t)
		for i := range out {
			out[i] -= start
		}
		return out
	}
	sent := shift(p.sentS)
	var overTime []figure
	if len(p.ttft) > 0 {
		overTime = append(overTime, figure{ID: "ttft-time", Caption: "by send time",
			SVG: template.HTML(lineSVG("TTFT per time slice", "s since first request", "ms", []series{
				{"p50", xs, sliced(sent, p.ttftAt, 0, width, n, quantileOf(0.5))},
				{"p99", xs, sliced(sent, p.ttftAt, 0, width, n, quantileOf(0.99))}}, bands...))})
	}
	if len(p.itl) > 0 {
		overTime = append(overTime, figure{ID: "itl-time", Caption: "by send time",
			SVG: template.HTML(lineSVG("ITL per time slice", "s since first request", "ms", []series{
				{"p50", xs, sliced(sent, p.itlAt, 0, width, n, quantileOf(0.5))},
				{"p99", xs, sliced(sent, p.itlAt, 0, width, n, quantileOf(0.99))}}, bands...))})
	}
	perSec := func(g []float64) float64 { return sumOf(g) / width }
	ones := func(k int) []float64 {
		o := make([]float64, k)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	tokRate := sliced(shift(p.chunkT), p.chunkTok, 0, width, n, perSec)
	reqRate := sliced(shift(p.doneS), ones(len(p.doneS)), 0, width, n, perSec)
	zero(tokRate)
	zero(reqRate)
	// After a warm-up, slices before the first measured request have no rate (the
	// warm-up's requests are not counted), not a rate of 0, and the slice the measured
	// window starts in is a rate over the part of it the window covers, none if that
	// is under half a slice.
	if from := (p.start - origin).Seconds(); from > 0 {
		k := min(int(from/width+1e-9), n-1) // from is whole slices (the grid above): no float floor below it
		for i := range k {
			tokRate[i], reqRate[i] = math.NaN(), math.NaN()
		}
		if covered := float64(k+1)*width - from; covered < width/2 {
			tokRate[k], reqRate[k] = math.NaN(), math.NaN()
		} else if covered < width {
			tokRate[k] *= width / covered
			reqRate[k] *= width / covered
		}
	}
	// The last slice may be partial: a rate over the part of it the run covered, and a
	// sliver (under half a slice) is merged into the slice before it, not extrapolated.
	rx := xs
	if last := span.Seconds() - float64(n-1)*width; last > 0 && last < width {
		if last < width/2 && n > 1 {
			merge := func(r []float64) []float64 {
				r[n-2] = (r[n-2] + r[n-1]) * width / (width + last)
				return r[:n-1]
			}
			tokRate, reqRate, rx = merge(tokRate), merge(reqRate), xs[:n-1]
		} else {
			tokRate[n-1] *= width / last
			reqRate[n-1] *= width / last
		}
	}
	overTime = append(overTime,
		figure{ID: "token-throughput", Caption: "output tokens received per second",
			SVG: template.HTML(lineSVG("Output token throughput", "s since first request", "tokens/s", []series{{"tokens/s", rx, tokRate}}, bands...))},
		figure{ID: "request-throughput", Caption: "successful requests completed per second",
			SVG: template.HTML(lineSVG("Request throughput", "s since first request", "requests/s", []series{{"requests/s", rx, reqRate}}, bands...))})
	if p.failures > 0 { // no empty chart when nothing failed
		errs := sliced(shift(p.errAt), ones(len(p.errAt)), 0, width, n, sumOf)
		zero(errs)
		page.Errors = []figure{{ID: "error-timeline", Caption: "failed requests per time slice (by completion time)",
			SVG: template.HTML(barSVG("Errors over time", "s since first request", "failed requests", xs, width, errs, errorColor))}}
	}
	page.Overview = newOverview(opts.Mark, opts.Headline, *sum, overTime)
	page.GPU = gpuSection(opts.GPU, *sum)
	page.Prefix = prefixSection(&p.prefix, opts.PrefixCache, start, width, n, xs, bands)
	for k, c := range p.errKinds {
		page.ErrRows = append(page.ErrRows, errRow{Kind: k, Count: c, Example: p.errSamples[k]})
	}
	slices.SortFunc(page.ErrRows, func(a, b errRow) int { return cmp.Or(b.Count-a.Count, cmp.Compare(a.Kind, b.Kind)) })
	return render(w, runTmpl, page)
}

// chartOrigin is where the charts over time start, for a run whose first request (a
// warm-up one, perhaps) was sent at first and whose measured window starts at start,
// in slices of width seconds: the measured window's slices are the timeslice exports'
// ([TimeSlices], from start), and before start whole slices reach back over the
// warm-up, so the charts' grid is that grid.
func chartOrigin(first, start time.Duration, width float64) time.Duration {
	if first >= start {
		return start
	}
	w := time.Duration(math.Round(width * 1e9))
	return start - time.Duration(math.Ceil(float64(start-first)/float64(w)))*w
}

func zero(v []float64) {
	for i := range v {
		if math.IsNaN(v[i]) {
			v[i] = 0
		}
	}
}
