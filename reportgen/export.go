package reportgen

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// Export file names, as AIPerf names them (so existing dashboards and scripts find
// them), plus perfgate's HTML report and manifest. RecordsFile is the raw-record copy
// earlier versions wrote beside client.jsonl; it is no longer written (the client
// recording is the one copy), and [LoadRecording] still reads it in old directories.
const (
	AIPerfJSONFile  = "profile_export_aiperf.json" // aggregate metrics keyed by metric tag
	AIPerfCSVFile   = "profile_export_aiperf.csv"  // the same, as CSV sections
	AIPerfJSONLFile = "profile_export.jsonl"       // one AIPerf-shaped record per request
	RecordsFile     = "perfgate_records.jsonl"     // legacy: raw record.Client lines, read but not written
	RunReportFile   = "report.html"                // WriteRunReport output
)

// DefaultExportPrefix is the AIPerf exports' file prefix.
const DefaultExportPrefix = "profile_export"

// ExportFiles returns the names of the AIPerf exports with prefix ("" = the default):
// the aggregate JSON and CSV and the per-request JSONL.
func ExportFiles(prefix string) (json, csv, jsonl string) {
	if prefix == "" {
		return AIPerfJSONFile, AIPerfCSVFile, AIPerfJSONLFile
	}
	return prefix + "_aiperf.json", prefix + "_aiperf.csv", prefix + ".jsonl"
}

// each returns the run's record iterator ([Run.Each], or over [Run.Records]).
func (run Run) each() func(fn func(*record.Client) error) error {
	if run.Records == nil && run.Each != nil {
		return run.Each
	}
	return sliceEach(run.Records)
}

// sliceEach iterates over recs.
func sliceEach(recs []record.Client) func(fn func(*record.Client) error) error {
	return func(fn func(*record.Client) error) error {
		for i := range recs {
			if err := fn(&recs[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// Run is one finished profile run, as the exports see it.
type Run struct {
	// Records are the client records of every request, warmup included (flagged).
	Records []record.Client
	// Each, when Records is nil, streams the records instead: it calls fn with each
	// one in order (the record may be reused after fn returns) and returns fn's first
	// error. scenario passes a pass over client.jsonl, so exports of a long run never
	// hold its records in memory. nil with nil Records: no records.
	Each func(fn func(*record.Client) error) error
	// RecordFile is the name, inside the export directory, of the file that already
	// holds Records as record.Client lines (run.Run's client.jsonl, appended to
	// as the run went), or "". The manifest lists it; [WriteExports] never writes a
	// copy of the records.
	RecordFile string
	// Metrics is the run's summary (loadgen.ComputeMetrics).
	Metrics record.Metrics
	// Manifest describes what ran; [WriteExports] fills its Version, Created, Host and
	// Files when they are empty.
	Manifest Manifest
	// Cancelled reports that the run was stopped before it completed (exported as
	// AIPerf's was_cancelled).
	Cancelled bool
	// PrefixCache is the ideal prefix-cache counts loadgen made (AIPerf's
	// theoretical_prefix_cache_hit); nil = none.
	PrefixCache *record.PrefixCacheIdeal
}

// ExportOptions tunes [WriteExports]. The zero value writes every file.
type ExportOptions struct {
	// Prefix names the AIPerf exports PREFIX_aiperf.json, PREFIX_aiperf.csv and
	// PREFIX.jsonl (AIPerf's --profile-export-prefix); "" = DefaultExportPrefix.
	Prefix string
	// NoHTML skips the HTML run report.
	NoHTML bool
	// NoRecords skips the per-request export (profile_export.jsonl).
	NoRecords bool
	// Report tunes the HTML run report.
	Report RunReportOptions
	// ServerMetrics, when set, is written as server_metrics.json and shown in the
	// HTML report (unless Report.ServerMetrics is set already). The AIPerf files keep
	// their shape.
	ServerMetrics *servermetrics.Summary
	// SliceDuration, when positive, writes AIPerf's timeslice exports
	// (PREFIX_aiperf_timeslices.json and .csv: each metric per slice of this width,
	// [SliceMetrics]) and makes the HTML report's charts over time use the same slices
	// (unless Report.TimeSlice is set already). AIPerf's --slice-duration. A width
	// giving more than [MaxTimeSlices] slices writes every other export and then
	// returns the error.
	SliceDuration time.Duration
}

// WriteExports writes the run's exports into dir (created if needed): AIPerf's
// profile_export_aiperf.json, profile_export_aiperf.csv and profile_export.jsonl,
// report.html, and the manifest (perfgate_manifest.json) that lists them (and
// run.RecordFile, the recording they came from). Each file is written to a temporary name and renamed when complete, and
// the manifest comes last, so a directory with a manifest holds a complete export and
// an interrupted export never leaves a file that looks complete. It returns the paths
// written, manifest last.
func WriteExports(dir string, run Run, opts ExportOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reportgen: %w", err)
	}
	// A manifest from an earlier export would vouch for files about to be replaced:
	// remove it first, so only a finished export has one.
	if err := os.Remove(filepath.Join(dir, ManifestFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reportgen: %w", err)
	}
	man := run.Manifest
	if man.Version == "" {
		man.Version = ModuleVersion()
	}
	if man.VCS == nil {
		man.VCS = BuildVCS()
	}
	if man.Created.IsZero() {
		man.Created = runStart(run.each())
	}
	if man.Host.OS == "" {
		man.Host = HostFacts()
	}
	type file struct {
		name  string
		write func(io.Writer) error
	}
	jsonName, csvName, jsonlName := ExportFiles(opts.Prefix)
	mopt := metric.Options{UsageOSL: run.Metrics.OSLSource == "usage", UsageISL: run.Metrics.ISLSource == "usage"}
	files := []file{
		{jsonName, func(w io.Writer) error { return WriteAIPerfJSON(w, run) }},
		{csvName, func(w io.Writer) error { return WriteAIPerfCSV(w, run.Metrics) }},
	}
	if !opts.NoRecords {
		files = append(files,
			file{jsonlName, func(w io.Writer) error {
				return writeAIPerfJSONL(w, run.each(), mopt)
			}})
	}
	if opts.ServerMetrics != nil {
		files = append(files, file{servermetrics.SummaryFile, func(w io.Writer) error { return writeJSON(w, opts.ServerMetrics) }})
	}
	// A slice duration that cuts the run too finely leaves out the timeslice files
	// (and the report picks its own width), writes every other export, and is
	// reported after them: the run's exports are not lost to it.
	var sliceErr error
	reportSlice := opts.SliceDuration
	if opts.SliceDuration > 0 {
		ts, slices, err := SliceMetrics(run.each(), opts.SliceDuration, mopt)
		if err != nil {
			sliceErr, reportSlice = err, 0
		} else {
			tsJSON, tsCSV := TimesliceFiles(opts.Prefix)
			files = append(files,
				file{tsJSON, func(w io.Writer) error { return WriteTimeslicesJSON(w, run, ts, slices) }},
				file{tsCSV, func(w io.Writer) error { return WriteTimeslicesCSV(w, slices) }})
		}
	}
	if !opts.NoHTML {
		ro := opts.Report
		if ro.TimeSlice == 0 {
			ro.TimeSlice = reportSlice
		}
		if ro.ServerMetrics == nil {
			ro.ServerMetrics = opts.ServerMetrics
		}
		if ro.Metrics == nil && (len(run.Metrics.Stats) > 0 || len(run.Metrics.Scalars) > 0) {
			ro.Metrics = &run.Metrics
		}
		files = append(files, file{RunReportFile, func(w io.Writer) error { return writeRunReport(w, run.each(), &man, ro) }})
	}
	var paths []string
	man.Files = nil
	if run.RecordFile != "" {
		man.Files = append(man.Files, run.RecordFile)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := WriteFileAtomic(p, f.write); err != nil {
			return paths, err
		}
		paths = append(paths, p)
		man.Files = append(man.Files, f.name)
	}
	p := filepath.Join(dir, ManifestFile)
	if err := WriteFileAtomic(p, func(w io.Writer) error { return writeJSON(w, man) }); err != nil {
		return paths, err
	}
	if sliceErr != nil {
		sliceErr = fmt.Errorf("%w (the timeslice exports were not written; the other exports were)", sliceErr)
	}
	return append(paths, p), sliceErr
}

// WriteFileAtomic writes path through write into a temporary file in the same
// directory and renames it into place only when write and the close succeed; on
// failure the temporary file is removed and path is left as it was.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("reportgen: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("reportgen: write %s: %w", filepath.Base(path), err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reportgen: write %s: %w", filepath.Base(path), err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("reportgen: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("reportgen: write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("reportgen: %w", err)
	}
	return nil
}

// WriteJSON writes v as perfgate's own JSON artifacts are written (scenario.json,
// runs.json, shard.json, a series' statistics, …): indented by two spaces, with <, >
// and & escaped as encoding/json escapes them, and a final newline.
func WriteJSON(w io.Writer, v any) error { return encodeJSON(w, v, true) }

// writeJSON writes the AIPerf-compatible exports: as WriteJSON, but with <, > and &
// as they are, as AIPerf writes them.
func writeJSON(w io.Writer, v any) error { return encodeJSON(w, v, false) }

func encodeJSON(w io.Writer, v any, escapeHTML bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	return enc.Encode(v)
}

// runStart returns the wall-clock start of a recording (UTC), or now if unknown.
func runStart(each func(func(*record.Client) error) error) time.Time {
	var t time.Time
	errFound := errors.New("found")
	_ = each(func(r *record.Client) error {
		if r.RunStartUnixNano != 0 {
			t = time.Unix(0, r.RunStartUnixNano).UTC()
			return errFound
		}
		return nil
	})
	if t.IsZero() {
		return time.Now().UTC()
	}
	return t
}

// jsonStat is one distribution metric in profile_export_aiperf.json.
type jsonStat struct {
	Unit string   `json:"unit"`
	Avg  float64  `json:"avg"`
	P1   *float64 `json:"p1,omitempty"`
	P5   *float64 `json:"p5,omitempty"`
	P10  *float64 `json:"p10,omitempty"`
	P25  *float64 `json:"p25,omitempty"`
	P50  *float64 `json:"p50,omitempty"`
	P75  *float64 `json:"p75,omitempty"`
	P90  *float64 `json:"p90,omitempty"`
	P95  *float64 `json:"p95,omitempty"`
	P99  *float64 `json:"p99,omitempty"`
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
	Std  *float64 `json:"std,omitempty"`
}

// statJSON is s as profile_export_aiperf.json and the timeslice export write it.
func statJSON(s record.Stat) jsonStat {
	return jsonStat{Unit: aiperfUnit(s.Unit), Avg: s.Avg, P1: finite(s.P1), P5: finite(s.P5), P10: finite(s.P10),
		P25: finite(s.P25), P50: finite(s.P50), P75: finite(s.P75), P90: finite(s.P90), P95: finite(s.P95), P99: finite(s.P99),
		Min: finite(s.Min), Max: finite(s.Max), Std: finite(s.Std)}
}

// jsonScalar is a single value as profile_export_aiperf.json writes it: unit and avg.
type jsonScalar struct {
	Unit string  `json:"unit"`
	Avg  float64 `json:"avg"`
}

// scalarJSON is s as profile_export_aiperf.json and the timeslice export write it.
func scalarJSON(s record.Scalar) jsonScalar { return jsonScalar{aiperfUnit(s.Unit), s.Value} }

type errorSummary struct {
	ErrorDetails aiperfError `json:"error_details"`
	Count        int         `json:"count"`
}

type aiperfError struct {
	Code    *int   `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// orderedJSON writes an object whose keys keep insertion order.
type orderedJSON struct {
	keys []string
	vals map[string]any
}

func (o *orderedJSON) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// finite returns a pointer to v, or nil for NaN/Inf (JSON has no such numbers).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteAIPerfJSON writes profile_export_aiperf.json: one object keyed by AIPerf metric
// tag. Distribution metrics carry unit, avg, p1…p99, min, max and std; single values
// carry unit and avg. Then AIPerf's run fields (start_time, end_time, was_cancelled,
// error_summary) and input_config (the manifest's Config), plus perfgate's manifest
// under "perfgate".
func WriteAIPerfJSON(w io.Writer, run Run) error {
	m := run.Metrics
	var o orderedJSON
	for _, n := range statNames(m) {
		o.set(info(n).Tag, statJSON(m.Stats[n]))
	}
	for _, n := range scalarNames(m) {
		s := m.Scalars[n]
		v := s.Value
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		o.set(info(n).Tag, scalarJSON(s))
	}
	aiperfPrefixCache(&o, run)
	start, end := wallSpan(run.each())
	if !start.IsZero() {
		o.set("start_time", start.Format("2006-01-02T15:04:05.000000"))
		o.set("end_time", end.Format("2006-01-02T15:04:05.000000"))
	}
	o.set("was_cancelled", run.Cancelled)
	o.set("error_summary", errorSummaries(run.each()))
	if run.Manifest.Config != nil {
		o.set("input_config", run.Manifest.Config)
	}
	o.set("perfgate", struct {
		Version   string             `json:"version"`
		Scenario  string             `json:"scenario,omitempty"`
		Seed      uint64             `json:"seed"`
		Tokenizer *TokenizerInfo     `json:"tokenizer,omitempty"`
		Warmup    int                `json:"warmup_count"`
		OSLSource string             `json:"osl_source,omitempty"`
		SLO       map[string]float64 `json:"slo,omitempty"`
		Quantiles string             `json:"quantile_method"`
	}{cmp.Or(run.Manifest.Version, ModuleVersion()), run.Manifest.Scenario, run.Manifest.Seed, run.Manifest.Tokenizer,
		m.Warmup, m.OSLSource, m.SLO, "linear (numpy default)"})
	return writeJSON(w, o)
}

// wallSpan returns the wall-clock times of the first send and the last completion.
func wallSpan(each func(func(*record.Client) error) error) (start, end time.Time) {
	var lo, hi time.Duration = -1, 0
	var base int64
	_ = each(func(r *record.Client) error {
		if r.Warmup {
			return nil
		}
		base = r.RunStartUnixNano
		if lo < 0 || r.Sent < lo {
			lo = r.Sent
		}
		hi = max(hi, r.Done)
		return nil
	})
	if lo < 0 || base == 0 {
		return time.Time{}, time.Time{}
	}
	return time.Unix(0, base).Add(lo).UTC(), time.Unix(0, base).Add(hi).UTC()
}

// errorOf maps a failed record onto AIPerf's error details.
func errorOf(r *record.Client) aiperfError {
	e := aiperfError{Type: r.ErrorKind, Message: r.Error}
	if r.Status != 0 {
		code := r.Status
		e.Code = &code
	}
	return e
}

func errorSummaries(each func(func(*record.Client) error) error) []errorSummary {
	idx := map[string]int{}
	out := []errorSummary{}
	_ = each(func(r *record.Client) error {
		if r.Warmup || r.OK() {
			return nil
		}
		e := errorOf(r)
		key := fmt.Sprint(r.Status, "\x00", e.Type, "\x00", e.Message)
		if k, ok := idx[key]; ok {
			out[k].Count++
			return nil
		}
		idx[key] = len(out)
		out = append(out, errorSummary{ErrorDetails: e, Count: 1})
		return nil
	})
	slices.SortStableFunc(out, func(a, b errorSummary) int { return b.Count - a.Count })
	return out
}

// csvOrder is the column order of AIPerf's statistics CSV.
var csvStatCols = []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// WriteAIPerfCSV writes profile_export_aiperf.csv in AIPerf's layout: a section of
// distribution metrics (Metric,avg,min,max,p1,…,p99,std), a blank line, and a section
// of single values (Metric,Value). Metric names are headers with units in
// parentheses ("Request Latency (ms)"); values have two decimals.
func WriteAIPerfCSV(w io.Writer, m record.Metrics) error {
	cw := csv.NewWriter(w)
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	_ = cw.Write(append([]string{"Metric"}, csvStatCols...))
	for _, n := range statNames(m) {
		s := m.Stats[n]
		_ = cw.Write([]string{label(info(n).Header, s.Unit), f(s.Avg), f(s.Min), f(s.Max), f(s.P1), f(s.P5), f(s.P10), f(s.P25),
			f(s.P50), f(s.P75), f(s.P90), f(s.P95), f(s.P99), f(s.Std)})
	}
	cw.Flush()
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	_ = cw.Write([]string{"Metric", "Value"})
	for _, n := range scalarNames(m) {
		s := m.Scalars[n]
		_ = cw.Write([]string{label(info(n).Header, s.Unit), f(s.Value)})
	}
	cw.Flush()
	return cw.Error()
}

type jsonlValue struct {
	Value any    `json:"value"`
	Unit  string `json:"unit"`
}

type jsonlMeta struct {
	SessionNum        int    `json:"session_num"`
	XRequestID        string `json:"x_request_id"`
	XCorrelationID    string `json:"x_correlation_id"`
	ConversationID    string `json:"conversation_id"`
	TurnIndex         int    `json:"turn_index"`
	RequestStartNs    int64  `json:"request_start_ns"`
	RequestAckNs      *int64 `json:"request_ack_ns"`
	RequestEndNs      int64  `json:"request_end_ns"`
	WorkerID          string `json:"worker_id"`
	RecordProcessorID string `json:"record_processor_id"`
	BenchmarkPhase    string `json:"benchmark_phase"`
	WasCancelled      bool   `json:"was_cancelled"`
	CancellationTime  *int64 `json:"cancellation_time_ns"`
}

// WriteAIPerfJSONL writes profile_export.jsonl: one line per request in AIPerf's
// record shape ({"metadata": …, "metrics": {tag: {"value", "unit"}}, "error": …}).
// Warmup requests carry benchmark_phase "warmup". Successful streaming requests carry
// TTFT, TTST, request latency, ISL, OSL, ITL, inter-chunk latencies and per-user
// throughput; failed ones carry error_isl and the error. Every value is derived by
// package metric with its default options (OSL by client count); see
// [WriteAIPerfJSONLOptions].
func WriteAIPerfJSONL(w io.Writer, recs []record.Client) error {
	return WriteAIPerfJSONLOptions(w, recs, metric.Options{})
}

// WriteAIPerfJSONLOptions is [WriteAIPerfJSONL] with the metric definitions opt
// chooses (the run's: OSL by usage when its metrics say osl_source "usage").
func WriteAIPerfJSONLOptions(w io.Writer, recs []record.Client, opt metric.Options) error {
	return writeAIPerfJSONL(w, sliceEach(recs), opt)
}

func writeAIPerfJSONL(w io.Writer, each func(func(*record.Client) error) error, opt metric.Options) error {
	var q metric.Request
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return each(func(r *record.Client) error {
		base := r.RunStartUnixNano
		meta := jsonlMeta{
			SessionNum: r.Index, XRequestID: r.RequestID, XCorrelationID: cmp.Or(r.Conversation, r.RequestID),
			ConversationID: r.Conversation, TurnIndex: r.Turn,
			RequestStartNs: base + int64(r.Sent), RequestEndNs: base + int64(r.Done),
			WorkerID: "perfgate", RecordProcessorID: "perfgate", BenchmarkPhase: "profiling",
		}
		if r.Warmup {
			meta.BenchmarkPhase = "warmup"
		}
		if r.FirstByte > 0 {
			ack := base + int64(r.FirstByte)
			meta.RequestAckNs = &ack
		}
		if r.ErrorKind == record.ErrCancelled {
			meta.WasCancelled = true
			ct := base + int64(r.Done)
			meta.CancellationTime = &ct
		}
		var line struct {
			Metadata jsonlMeta    `json:"metadata"`
			Metrics  orderedJSON  `json:"metrics"`
			Error    *aiperfError `json:"error"`
		}
		line.Metadata = meta
		if !r.OK() {
			e := errorOf(r)
			line.Error = &e
			line.Metrics.set("error_isl", jsonlValue{r.ISL, "tokens"})
		} else {
			mt := &line.Metrics
			q.Reset(r, opt)
			mt.set("input_sequence_length", jsonlValue{q.ISL, "tokens"})
			if q.HasTTFT {
				mt.set("time_to_first_token", jsonlValue{metric.MS(q.TTFT), "ms"})
				if q.HasTTST {
					mt.set("time_to_second_token", jsonlValue{metric.MS(q.TTST), "ms"})
				}
				if len(q.ICL) > 0 {
					icl := make([]float64, len(q.ICL))
					for k, g := range q.ICL {
						icl[k] = metric.MS(g)
					}
					mt.set("inter_chunk_latency", jsonlValue{icl, "ms"})
				}
			}
			mt.set("request_latency", jsonlValue{metric.MS(q.Latency), "ms"})
			mt.set("output_sequence_length", jsonlValue{q.OSL, "tokens"})
			if r.CachedTokens.Known {
				mt.set(AIPerfCachedTokens, jsonlValue{r.CachedTokens.N, "tokens"})
			}
			if itl, ok := q.ITL(); ok {
				mt.set("inter_token_latency", jsonlValue{itl, "ms"})
				if tp, ok := q.OutputThroughputPerUser(); ok {
					mt.set("output_token_throughput_per_user", jsonlValue{tp, "tokens/sec/user"})
				}
			}
			// The HTTP phases (AIPerf's http_req_* trace metrics), when recorded.
			for _, d := range metric.Catalogue() {
				if d.Kind != metric.PerRequest || !strings.HasPrefix(d.Name, "http_req_") {
					continue
				}
				if v, ok := d.Value(&q); ok {
					mt.set(d.Name, jsonlValue{v, aiperfUnit(d.Unit)})
				}
			}
		}
		return enc.Encode(line)
	})
}

// ReadRecords reads a client recording (record.Client lines: a run's client.jsonl, or
// an older run's perfgate_records.jsonl), lines of any length.
func ReadRecords(path string) ([]record.Client, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reportgen: %w", err)
	}
	defer f.Close()
	recs, err := record.ReadClient(f)
	if err != nil {
		return nil, fmt.Errorf("reportgen: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("reportgen: %s: %w", path, errEmpty)
	}
	return recs, nil
}

var errEmpty = errors.New("no records")
