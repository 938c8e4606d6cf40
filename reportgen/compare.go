package reportgen

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/record"
)

// Recording is one side of a comparison: the input and output lengths of the requests
// of a run, as a mock server received them or as a client sent them, plus what the
// server counted (tokenization modes, vocabulary) when known.
type Recording struct {
	// Label names the run in the report ("A", "baseline", a file name …).
	Label string
	// Source is where the recording was read from ("" for in-memory ones).
	Source string
	// Kind is "server" (mock-server recording), "client" (perfgate records) or
	// "aiperf" (AIPerf's profile_export.jsonl).
	Kind string
	// ISL and OSL are the per-request input and output lengths in tokens.
	ISL, OSL []int
	// Modes counts requests per tokenization mode (server recordings only).
	Modes map[string]int
	// Summary is the .summary.json companion of a server recording, if present.
	Summary *record.ServerSummary
}

// RecordingFromServer builds a comparison side from a mock-server recording. Rejected
// requests (4xx before counting) are left out; sum may be nil.
func RecordingFromServer(label string, recs []record.Server, sum *record.ServerSummary) Recording {
	r := Recording{Label: label, Kind: "server", Modes: map[string]int{}, Summary: sum}
	for i := range recs {
		s := &recs[i]
		if s.Rejected != "" || s.TokenizationMode == record.ModeNone {
			continue
		}
		r.ISL = append(r.ISL, s.ISL)
		r.OSL = append(r.OSL, s.OSL)
		r.Modes[s.TokenizationMode]++
	}
	return r
}

// RecordingFromClient builds a comparison side from client records: successful,
// non-warmup requests only.
func RecordingFromClient(label string, recs []record.Client) Recording {
	r := Recording{Label: label, Kind: "client"}
	for i := range recs {
		c := &recs[i]
		if c.Warmup || !c.OK() {
			continue
		}
		r.ISL = append(r.ISL, c.ISL)
		r.OSL = append(r.OSL, c.OSL)
	}
	return r
}

// LoadRecording reads a recording file, recognising by its first line a mock-server
// recording (record.Server lines), perfgate client records (client.jsonl, or the older
// perfgate_records.jsonl), or AIPerf's profile_export.jsonl. For a server recording it also reads the summary
// companion (FILE.summary.json, or FILE without .jsonl plus .summary.json) if present.
// label "" uses the file's base name.
//
// path may also be a run's artifact directory: its server.jsonl (the mock's recording)
// is used if present, else client.jsonl, perfgate_records.jsonl or profile_export.jsonl;
// the label then defaults to the directory's name.
func LoadRecording(path, label string) (Recording, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		label = cmp.Or(label, filepath.Base(filepath.Clean(path)))
		found := ""
		for _, name := range []string{"server.jsonl", "client.jsonl", RecordsFile, AIPerfJSONLFile} {
			if _, err := os.Stat(filepath.Join(path, name)); err == nil {
				found = filepath.Join(path, name)
				break
			}
		}
		if found == "" {
			return Recording{}, fmt.Errorf("reportgen: %s: a directory without a recording (server.jsonl, client.jsonl, %s or %s)", path, RecordsFile, AIPerfJSONLFile)
		}
		path = found
	}
	f, err := os.Open(path)
	if err != nil {
		return Recording{}, fmt.Errorf("reportgen: %w", err)
	}
	defer f.Close()
	label = cmp.Or(label, filepath.Base(path))
	first, err := firstLine(f)
	if err != nil {
		return Recording{}, fmt.Errorf("reportgen: %s: %w", path, err)
	}
	if first == nil {
		return Recording{}, fmt.Errorf("reportgen: %s: %w", path, errEmpty)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Recording{}, fmt.Errorf("reportgen: %w", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(first, &probe); err != nil {
		return Recording{}, fmt.Errorf("reportgen: %s: not a JSON-lines recording: %w", path, err)
	}
	var rec Recording
	switch recordingKind(probe) {
	case "server":
		recs, err := record.Read[record.Server](f)
		if err != nil {
			return Recording{}, fmt.Errorf("reportgen: %s: %w", path, err)
		}
		sum, err := readSummary(path)
		if err != nil {
			return Recording{}, err
		}
		rec = RecordingFromServer(label, recs, sum)
	case "aiperf":
		rec, err = readAIPerfJSONL(label, f)
		if err != nil {
			return Recording{}, fmt.Errorf("reportgen: %s: %w", path, err)
		}
	case "client":
		recs, err := record.ReadClient(f)
		if err != nil {
			return Recording{}, fmt.Errorf("reportgen: %s: %w", path, err)
		}
		rec = RecordingFromClient(label, recs)
	default:
		return Recording{}, fmt.Errorf("reportgen: %s: unknown recording format (want a mock-server recording, perfgate's client.jsonl or AIPerf's profile_export.jsonl)", path)
	}
	rec.Source = path
	if len(rec.ISL) == 0 {
		return Recording{}, fmt.Errorf("reportgen: %s: no successful requests to compare", path)
	}
	return rec, nil
}

// recordingKind tells the recording formats apart by the fields of a first line. A
// client record always has run_start_unix_ns and sent, which no other format writes, so
// it is recognised first: chat client records also carry tokenization_mode. A server
// record always has recv_ns and seq; tokenization_mode alone is enough for a recording
// by AIPerf's mock-server recorder, which writes only the shared first block. It returns
// "" for none of the formats.
func recordingKind(probe map[string]json.RawMessage) string {
	has := func(k string) bool { return probe[k] != nil }
	switch {
	case has("run_start_unix_ns") || has("sent"):
		return "client"
	case has("recv_ns") || has("seq") || has("tokenization_mode"):
		return "server"
	case has("metadata") && has("metrics"):
		return "aiperf"
	}
	return ""
}

// firstLine returns a copy of r's first non-blank line (nil if there is none),
// however long it is.
func firstLine(r io.Reader) ([]byte, error) {
	var first []byte
	err := record.EachLine(r, func(_ int, b []byte) error {
		first = bytes.Clone(b)
		return errStop
	})
	if err != nil && err != errStop {
		return nil, err
	}
	return first, nil
}

var errStop = errors.New("stop")

// readSummary reads the summary companion of a server recording, nil if there is none.
func readSummary(path string) (*record.ServerSummary, error) {
	for _, p := range []string{path + ".summary.json", strings.TrimSuffix(path, filepath.Ext(path)) + ".summary.json"} {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reportgen: %w", err)
		}
		var s record.ServerSummary
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("reportgen: %s: %w", p, err)
		}
		return &s, nil
	}
	return nil, nil
}

func readAIPerfJSONL(label string, data io.Reader) (Recording, error) {
	r := Recording{Label: label, Kind: "aiperf"}
	type val struct {
		Value json.RawMessage `json:"value"`
	}
	err := record.Each(data, func(line struct {
		Metadata struct {
			BenchmarkPhase string `json:"benchmark_phase"`
		} `json:"metadata"`
		Metrics map[string]val  `json:"metrics"`
		Error   json.RawMessage `json:"error"`
	}) error {
		if line.Metadata.BenchmarkPhase == "warmup" || (len(line.Error) > 0 && string(line.Error) != "null") {
			return nil
		}
		isl, ok1 := line.Metrics["input_sequence_length"]
		osl, ok2 := line.Metrics["output_sequence_length"]
		if !ok1 || !ok2 {
			return nil
		}
		i, err1 := strconv.ParseFloat(string(isl.Value), 64)
		o, err2 := strconv.ParseFloat(string(osl.Value), 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("non-numeric sequence length in %s / %s", isl.Value, osl.Value)
		}
		r.ISL = append(r.ISL, int(i))
		r.OSL = append(r.OSL, int(o))
		return nil
	})
	return r, err
}

// CompareOptions tunes [WriteCompareReport]. The zero value is ready to use.
type CompareOptions struct {
	// Title is the page title; "" = "perfgate comparison: A vs B".
	Title string
	// Alpha is the significance level of the two-sample tests; 0 = 0.05.
	Alpha float64
	// BinWidth is the histogram bin width in tokens; 0 = 2.
	BinWidth float64
	// TopN is how many tokens the vocabulary difference lists; 0 = 20.
	TopN int
	// Decode turns a token id into its text with the recordings' tokenizer; nil uses
	// the texts the summaries carry (their top tokens) and shows other tokens by id.
	Decode func(id int) string
	// TemplateIDs are the token ids the chat template itself emits around the
	// messages; the vocabulary difference lists them apart from the prompts' tokens.
	TemplateIDs map[int]bool
}

type card struct {
	Name string
	Rows []cardRow
}

type cardRow struct{ Stat, A, B, Delta, Pct string }

type modeRow struct {
	Mode       string
	A, B       int
	APct, BPct string
}

type vocabRow struct {
	ID                   int
	Text                 string
	ACount, BCount       int
	AShare, BShare, Diff string
}

type vocabFact struct{ Name, A, B string }

type testRow struct {
	Metric, Test, Statistic, PValue, Verdict, Class, Detail string
}

type comparePage struct {
	Title      string
	CSS        template.CSS
	A, B       Recording
	ColorA     string
	ColorB     string
	Cards      []card
	Figures    []figure
	Modes      []modeRow
	VocabFacts []vocabFact
	Vocab      []vocabRow
	VocabTmpl  []vocabRow
	VocabNote  string
	Decoded    bool
	Verdict    CompareVerdict
	Tests      []testRow
	Alpha      float64
}

// WriteCompareReport writes the HTML comparison of two recordings to w: stat cards
// for ISL and OSL (mean, std, p5, p95, min, max with B−A deltas), overlapping
// histograms with 2-token bins in two translucent colours, the tokenization modes of
// each run, the vocabulary top-N difference from the summary companions (when both
// have one), and the two-sample test verdicts (Kolmogorov–Smirnov and Mann–Whitney
// U on ISL and OSL at level Alpha). The page is one self-contained file.
func WriteCompareReport(w io.Writer, a, b Recording, opts CompareOptions) error {
	if len(a.ISL) == 0 || len(b.ISL) == 0 {
		return fmt.Errorf("reportgen: compare: %q has %d requests and %q has %d; both need at least one", a.Label, len(a.ISL), b.Label, len(b.ISL))
	}
	alpha := cmp.Or(opts.Alpha, 0.05)
	bw := cmp.Or(opts.BinWidth, 2)
	topN := cmp.Or(opts.TopN, 20)
	a.Label, b.Label = cmp.Or(a.Label, "A"), cmp.Or(b.Label, "B")
	p := comparePage{
		Title: cmp.Or(opts.Title, "perfgate comparison: "+a.Label+" vs "+b.Label),
		CSS:   css, A: a, B: b, ColorA: palette[0], ColorB: palette[1], Alpha: alpha,
		Verdict: Compare(a, b, alpha), Decoded: opts.Decode != nil,
	}
	for _, m := range []struct {
		name   string
		av, bv []int
		id     string
	}{{"Input sequence length (ISL)", a.ISL, b.ISL, "isl"}, {"Output sequence length (OSL)", a.OSL, b.OSL, "osl"}} {
		af, bf := ints(m.av), ints(m.bv)
		sa, sb := summarize(af), summarize(bf)
		c := card{Name: m.name}
		for _, r := range []struct {
			n    string
			x, y float64
		}{{"n", float64(sa.N), float64(sb.N)}, {"mean", sa.Mean, sb.Mean}, {"std", sa.Std, sb.Std}, {"p5", sa.P5, sb.P5},
			{"p50", sa.P50, sb.P50}, {"p95", sa.P95, sb.P95}, {"min", sa.Min, sb.Min}, {"max", sa.Max, sb.Max}} {
			pctS := "—"
			if r.x != 0 {
				pctS = fmt.Sprintf("%+.1f%%", (r.y-r.x)/math.Abs(r.x)*100)
			}
			row := cardRow{Stat: r.n, A: num(r.x), B: num(r.y), Delta: signed(r.y - r.x), Pct: pctS}
			if r.n == "n" {
				row.A, row.B, row.Delta = fmt.Sprint(sa.N), fmt.Sprint(sb.N), fmt.Sprintf("%+d", sb.N-sa.N)
			}
			c.Rows = append(c.Rows, row)
		}
		p.Cards = append(p.Cards, c)
		p.Figures = append(p.Figures, figure{ID: m.id + "-hist", Caption: fmt.Sprintf("%g-token bins, each run as a share of its own requests; overlap shows as the mixed colour, each run's outline stays on top", bw),
			SVG: template.HTML(histogramShareSVG(m.name, "tokens", []histSet{{a.Label, af}, {b.Label, bf}}, bw))})
		ks := p.Verdict.ISL
		if m.id == "osl" {
			ks = p.Verdict.OSL
		}
		mark := &ksMark{X: ks.At, Y1: ks.CDF1, Y2: ks.CDF2, Label: fmt.Sprintf("D = %.4f at %g", ks.Statistic, ks.At)}
		p.Figures = append(p.Figures, figure{ID: m.id + "-ecdf", Caption: fmt.Sprintf("two-sample KS: D = %.4f, p = %.3g (the largest gap, marked)", ks.Statistic, ks.PValue),
			SVG: template.HTML(ecdfWith(m.name+" ECDF", "tokens", []histSet{{a.Label, af}, {b.Label, bf}}, &ecdfExtra{KS: mark}))})
		for _, t := range twoSampleTests(af, bf, alpha) {
			t.Metric = strings.ToUpper(m.id)
			p.Tests = append(p.Tests, t)
		}
	}
	p.Modes = modeRows(a.Modes, b.Modes)
	p.VocabFacts, p.Vocab, p.VocabTmpl, p.VocabNote = vocabDiff(a.Summary, b.Summary, topN, opts.Decode, opts.TemplateIDs)
	return render(w, compareTmpl, p)
}

func signed(v float64) string {
	if v > 0 {
		return "+" + num(v)
	}
	return num(v)
}

func modeRows(a, b map[string]int) []modeRow {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	ta, tb := 0, 0
	keys := map[string]bool{}
	for k, v := range a {
		keys[k] = true
		ta += v
	}
	for k, v := range b {
		keys[k] = true
		tb += v
	}
	share := func(v, t int) string {
		if t == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(v)/float64(t))
	}
	var rows []modeRow
	for k := range keys {
		rows = append(rows, modeRow{Mode: k, A: a[k], B: b[k], APct: share(a[k], ta), BPct: share(b[k], tb)})
	}
	slices.SortFunc(rows, func(x, y modeRow) int { return cmp.Or(y.A+y.B-x.A-x.B, cmp.Compare(x.Mode, y.Mode)) })
	return rows
}

// vocab merges the vocabulary distributions of every endpoint of a summary.
type vocab struct {
	counts  map[int]int
	text    map[int]string
	total   int
	unique  int
	size    int
	entropy float64
}

func vocabOf(s *record.ServerSummary) *vocab {
	if s == nil {
		return nil
	}
	v := &vocab{counts: map[int]int{}, text: map[int]string{}}
	found := false
	for _, ep := range s.PerEndpoint {
		vd := ep.VocabDistribution
		if vd == nil {
			continue
		}
		found = true
		v.size = max(v.size, vd.VocabSize)
		v.total += vd.TotalTokens
		v.entropy = vd.EntropyBits // last one wins; shown only for single-endpoint runs
		if len(vd.Frequencies) > 0 {
			for k, c := range vd.Frequencies {
				if id, err := strconv.Atoi(k); err == nil {
					v.counts[id] += c
				}
			}
		} else {
			for _, t := range vd.TopTokens {
				v.counts[t.ID] += t.Count
			}
		}
		for _, t := range vd.TopTokens {
			v.text[t.ID] = t.Text
		}
	}
	if !found {
		return nil
	}
	v.unique = len(v.counts)
	if v.total == 0 {
		for _, c := range v.counts {
			v.total += c
		}
	}
	return v
}

// vocabDiff lists the topN tokens by combined share with each run's share and the
// difference in percentage points: the prompts' tokens, and apart from them the topN
// of the tokens the chat template emits (templ). decode names each id (nil: the
// summaries' texts, else the id).
func vocabDiff(sa, sb *record.ServerSummary, topN int, decode func(int) string, templ map[int]bool) ([]vocabFact, []vocabRow, []vocabRow, string) {
	va, vb := vocabOf(sa), vocabOf(sb)
	switch {
	case va == nil && vb == nil:
		return nil, nil, nil, "Neither recording has a .summary.json companion with a vocabulary distribution."
	case va == nil || vb == nil:
		return nil, nil, nil, "Only one recording has a .summary.json companion with a vocabulary distribution; nothing to compare."
	}
	facts := []vocabFact{
		{"total tokens", fmt.Sprint(va.total), fmt.Sprint(vb.total)},
		{"distinct ids seen", fmt.Sprint(va.unique), fmt.Sprint(vb.unique)},
		{"vocabulary size", fmt.Sprint(va.size), fmt.Sprint(vb.size)},
		{"entropy (bits)", fmt.Sprintf("%.3f", va.entropy), fmt.Sprintf("%.3f", vb.entropy)},
	}
	share := func(c, t int) float64 {
		if t == 0 {
			return 0
		}
		return 100 * float64(c) / float64(t)
	}
	ids := map[int]bool{}
	for id := range va.counts {
		ids[id] = true
	}
	for id := range vb.counts {
		ids[id] = true
	}
	type cand struct {
		id   int
		diff float64
		sum  float64
	}
	var cs []cand
	for id := range ids {
		x, y := share(va.counts[id], va.total), share(vb.counts[id], vb.total)
		cs = append(cs, cand{id, y - x, x + y})
	}
	// Most frequent tokens overall first (they matter most), ties by id.
	slices.SortFunc(cs, func(p, q cand) int {
		return cmp.Or(cmp.Compare(q.sum, p.sum), cmp.Compare(p.id, q.id))
	})
	var rows, trows []vocabRow
	for _, c := range cs {
		text := cmp.Or(va.text[c.id], vb.text[c.id], fmt.Sprintf("<id=%d>", c.id))
		if decode != nil {
			text = decode(c.id)
		}
		r := vocabRow{ID: c.id, Text: text, ACount: va.counts[c.id], BCount: vb.counts[c.id],
			AShare: fmt.Sprintf("%.2f%%", share(va.counts[c.id], va.total)), BShare: fmt.Sprintf("%.2f%%", share(vb.counts[c.id], vb.total)),
			Diff: fmt.Sprintf("%+.2f pp", c.diff)}
		switch {
		case templ[c.id] && len(trows) < topN:
			trows = append(trows, r)
		case !templ[c.id] && len(rows) < topN:
			rows = append(rows, r)
		}
	}
	return facts, rows, trows, ""
}

var compareTmpl = mustPage(`<h1>{{.Title}}</h1>
<p class="sub"><span class="sw" style="background:{{.ColorA}};opacity:.6"></span><b>{{.A.Label}}</b> {{.A.Kind}} recording{{with .A.Source}} <code>{{.}}</code>{{end}}, {{len .A.ISL}} requests &nbsp;·&nbsp;
<span class="sw" style="background:{{.ColorB}};opacity:.6"></span><b>{{.B.Label}}</b> {{.B.Kind}} recording{{with .B.Source}} <code>{{.}}</code>{{end}}, {{len .B.ISL}} requests</p>
<h2>Verdict</h2>
<p id="verdict" class="verdict {{if eq .Verdict.Kind "different"}}fail{{else}}pass{{end}}" data-kind="{{.Verdict.Kind}}">{{.Verdict.Text}}</p>
<h2>Input and output lengths</h2>
<div class="cards">{{range .Cards}}<div class="card stat-card"><h3>{{.Name}}</h3>
<table><thead><tr><th class="l">tokens</th><th>{{$.A.Label}}</th><th>{{$.B.Label}}</th><th>Δ (B−A)</th><th>Δ%</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="l">{{.Stat}}</td><td>{{.A}}</td><td>{{.B}}</td><td>{{.Delta}}</td><td>{{.Pct}}</td></tr>{{end}}
</tbody></table></div>{{end}}</div>
{{template "figs" .Figures}}
<h2>Two-sample tests (α = {{.Alpha}})</h2>
<table id="tests"><thead><tr><th class="l">metric</th><th class="l">test</th><th>statistic</th><th>p-value</th><th class="l">verdict</th></tr></thead><tbody>
{{range .Tests}}<tr><td class="l">{{.Metric}}</td><td class="l">{{.Test}}</td><td>{{.Statistic}}</td><td>{{.PValue}}</td><td class="l {{.Class}}" title="{{.Detail}}">{{.Verdict}}</td></tr>{{end}}
</tbody></table>
<h2>Tokenization modes</h2>
{{if .Modes}}<table id="modes"><thead><tr><th class="l">mode</th><th>{{.A.Label}}</th><th>share</th><th>{{.B.Label}}</th><th>share</th></tr></thead><tbody>
{{range .Modes}}<tr><td class="l"><code>{{.Mode}}</code></td><td>{{.A}}</td><td>{{.APct}}</td><td>{{.B}}</td><td>{{.BPct}}</td></tr>{{end}}
</tbody></table>{{else}}<p class="sub">Client-side recordings: the tokenization mode is recorded by the mock server only.</p>{{end}}
<h2>Vocabulary</h2>
{{if .VocabNote}}<p class="sub" id="vocab-note">{{.VocabNote}}</p>{{else}}
<table id="vocab-facts"><thead><tr><th class="l"></th><th>{{.A.Label}}</th><th>{{.B.Label}}</th></tr></thead><tbody>
{{range .VocabFacts}}<tr><td class="l">{{.Name}}</td><td>{{.A}}</td><td>{{.B}}</td></tr>{{end}}</tbody></table>
<p class="sub">{{if .Decoded}}Token texts decoded with the recordings' tokenizer.{{else}}No tokenizer known: tokens outside the summaries' top tokens are shown by id.{{end}}</p>
<h3>Prompt tokens</h3>
<table id="vocab"><thead><tr><th>id</th><th class="l">token</th><th>{{.A.Label}} count</th><th>share</th><th>{{.B.Label}} count</th><th>share</th><th>difference</th></tr></thead><tbody>
{{range .Vocab}}<tr><td>{{.ID}}</td><td class="l"><code>{{printf "%q" .Text}}</code></td><td>{{.ACount}}</td><td>{{.AShare}}</td><td>{{.BCount}}</td><td>{{.BShare}}</td><td>{{.Diff}}</td></tr>{{end}}
</tbody></table>
{{if .VocabTmpl}}<h3>Chat-template tokens</h3><p class="sub">Tokens the chat template itself emits around each message (they also occur in prompts).</p>
<table id="vocab-template"><thead><tr><th>id</th><th class="l">token</th><th>{{.A.Label}} count</th><th>share</th><th>{{.B.Label}} count</th><th>share</th><th>difference</th></tr></thead><tbody>
{{range .VocabTmpl}}<tr><td>{{.ID}}</td><td class="l"><code>{{printf "%q" .Text}}</code></td><td>{{.ACount}}</td><td>{{.AShare}}</td><td>{{.BCount}}</td><td>{{.BShare}}</td><td>{{.Diff}}</td></tr>{{end}}
</tbody></table>{{end}}{{end}}
`)
