package reportgen

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// slicedRun is a known recording: two warm-up requests before the measured window,
// then request i (0…11) sent at 10s + i·0.5s with a TTFT of 10·(i+1) ms and three
// more tokens 5 ms apart; request 5 fails. With 2 s slices from the first measured
// send (10 s), requests 0–3 fall in slice 0, 4–7 in slice 1, 8–11 in slice 2.
func slicedRun() []record.Client {
	var recs []record.Client
	add := func(i int, sent time.Duration, ttft time.Duration, warm, fail bool) {
		r := record.Client{Index: len(recs), RequestID: "r" + itoa(len(recs)), Endpoint: "chat", Model: "m", Stream: true,
			RunStartUnixNano: 1_760_000_000_000_000_000, Scheduled: sent, Sent: sent, Status: 200, ISL: 10, ISLExact: true,
			RequestedOSL: 4, UsagePromptTokens: -1, UsageCompletionTokens: -1, Warmup: warm}
		if fail {
			r.Status, r.ErrorKind, r.Error, r.Done = 500, record.ErrHTTPStatus, "boom", sent+time.Millisecond
			recs = append(recs, r)
			return
		}
		t := sent + ttft
		r.FirstByte = t
		for k := range 4 {
			r.Chunks = append(r.Chunks, record.Chunk{T: t + time.Duration(k)*5*time.Millisecond, Tokens: 1, Choices: true})
		}
		r.OSL, r.FinishReason, r.Done = 4, "length", t+16*time.Millisecond
		recs = append(recs, r)
	}
	add(-1, 8*time.Second, 500*time.Millisecond, true, false)
	add(-1, 9*time.Second, 500*time.Millisecond, true, false)
	for i := range 12 {
		add(i, 10*time.Second+time.Duration(i)*500*time.Millisecond, time.Duration(10*(i+1))*time.Millisecond, false, i == 5)
	}
	return recs
}

// numpyQuantile is numpy's default (linear) percentile, written here from its
// definition, independently of package metric: the value at rank p·(n-1) of the
// sorted sample, interpolated between its neighbours.
func numpyQuantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	h := p * float64(len(s)-1)
	lo := math.Floor(h)
	if int(lo)+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[int(lo)] + (h-lo)*(s[int(lo)+1]-s[int(lo)])
}

// The slices of a known recording, computed here by hand from the definition (send
// time in [10s + 2k, 10s + 2k + 2s), warm-up left out, failed requests counted but
// without a TTFT), are what the timeslice CSV and JSON hold.
func TestTimeslicesOfKnownRecording(t *testing.T) {
	recs := slicedRun()
	ts, ms, err := SliceMetrics(sliceEach(recs), 2*time.Second, metric.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The last request is sent at 15.5 s and done at 15.5 + 0.12 + 0.016 s: three slices.
	if ts.Start != 10*time.Second || ts.N != 3 || len(ms) != 3 {
		t.Fatalf("slices %+v (%d summaries); want 3 from 10s", ts, len(ms))
	}
	want := [3][]float64{}
	for i := range 12 {
		if i != 5 {
			k := i / 4
			want[k] = append(want[k], float64(10*(i+1)))
		}
	}
	var b strings.Builder
	if err := WriteTimeslicesCSV(&b, ms); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], []string{"Timeslice", "Metric", "Unit", "Stat", "Value"}) {
		t.Errorf("CSV header %v; want AIPerf's Timeslice,Metric,Unit,Stat,Value", rows[0])
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		if r[1] == "Time to First Token" {
			if r[2] != "ms" {
				t.Errorf("TTFT unit %q, want ms", r[2])
			}
			got[r[0]+"/"+r[3]] = r[4]
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for k, xs := range want {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		for stat, v := range map[string]float64{"avg": sum / float64(len(xs)), "min": slices.Min(xs), "max": slices.Max(xs),
			"p50": numpyQuantile(xs, 0.5), "p90": numpyQuantile(xs, 0.9), "p99": numpyQuantile(xs, 0.99)} {
			key := strconv.Itoa(k) + "/" + stat
			if got[key] != f(v) {
				t.Errorf("slice %d TTFT %s = %q, want %s (from %v)", k, stat, got[key], f(v), xs)
			}
		}
	}
	// The JSON holds the same numbers under AIPerf's keys, and each slice's bounds and
	// counts: slice 1 has request 5's failure.
	b.Reset()
	if err := WriteTimeslicesJSON(&b, Run{}, ts, ms); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Timeslices []map[string]json.RawMessage `json:"timeslices"`
		Perfgate   struct {
			SliceDuration float64 `json:"slice_duration_s"`
			Slices        []struct {
				Start    float64 `json:"start_s"`
				End      float64 `json:"end_s"`
				Requests int     `json:"requests"`
				Errors   int     `json:"errors"`
			} `json:"slices"`
		} `json:"perfgate"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Timeslices) != 3 || doc.Perfgate.SliceDuration != 2 {
		t.Fatalf("JSON: %d slices of %gs; want 3 of 2s", len(doc.Timeslices), doc.Perfgate.SliceDuration)
	}
	for k, s := range doc.Timeslices {
		var idx int
		var ttft struct {
			Unit string  `json:"unit"`
			Avg  float64 `json:"avg"`
			P50  float64 `json:"p50"`
		}
		_ = json.Unmarshal(s["timeslice_index"], &idx)
		if err := json.Unmarshal(s["time_to_first_token"], &ttft); err != nil || idx != k || ttft.Unit != "ms" || math.Abs(ttft.P50-numpyQuantile(want[k], 0.5)) > 1e-9 {
			t.Errorf("JSON slice %d: index %d, TTFT %+v (%v); want p50 %g ms", k, idx, ttft, err, numpyQuantile(want[k], 0.5))
		}
	}
	if sl := doc.Perfgate.Slices; len(sl) != 3 || sl[1].Requests != 3 || sl[1].Errors != 1 || sl[0].Requests != 4 {
		t.Errorf("slice bounds and counts %+v; want 4, 3 (+1 failed), 4 requests", sl)
	}
}

// A send time exactly on a boundary starts the next slice; before Start is a negative
// index (a warm-up request), and the last slice ends at the run's end.
func TestTimeSlicesIndex(t *testing.T) {
	ts := NewTimeSlices(10*time.Second, 15*time.Second, 2*time.Second)
	if ts.N != 3 {
		t.Fatalf("N = %d, want 3", ts.N)
	}
	for _, c := range []struct {
		t    time.Duration
		want int
	}{{10 * time.Second, 0}, {12*time.Second - 1, 0}, {12 * time.Second, 1}, {9 * time.Second, -1}, {8 * time.Second, -1}, {7999 * time.Millisecond, -2}, {16 * time.Second, 3}} {
		if got := ts.Index(c.t); got != c.want {
			t.Errorf("Index(%v) = %d, want %d", c.t, got, c.want)
		}
	}
	if from, to := ts.Bounds(2); from != 4*time.Second || to != 5*time.Second {
		t.Errorf("Bounds(2) = %v, %v; want 4s, 5s (the run ends at 15s)", from, to)
	}
	if one := NewTimeSlices(time.Second, time.Second, time.Second); one.N != 1 {
		t.Errorf("an instant run has %d slices, want 1", one.N)
	}
}

// A slice duration that cuts the run into more than MaxTimeSlices slices, or is not
// positive, is an error that says so.
func TestTimeslicesRefused(t *testing.T) {
	recs := slicedRun()
	if _, _, err := SliceMetrics(sliceEach(recs), time.Microsecond, metric.Options{}); err == nil || !strings.Contains(err.Error(), "more than 10000") {
		t.Errorf("1µs slices: %v; want a too-many-slices error", err)
	}
	if _, _, err := SliceMetrics(sliceEach(recs), 0, metric.Options{}); err == nil {
		t.Error("0 s slices: no error")
	}
}

// WriteExports with a slice duration writes both timeslice files (with the export
// prefix), lists them in the manifest, and the report's charts use the same width and
// the measured window's grid: the warm-up's slices are whole slices before it.
func TestExportsWriteTimeslices(t *testing.T) {
	dir := t.TempDir()
	recs := slicedRun()
	paths, err := WriteExports(dir, Run{Records: recs, Metrics: metricsOf(recs)}, ExportOptions{Prefix: "nightly", SliceDuration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nightly_aiperf_timeslices.json", "nightly_aiperf_timeslices.csv"} {
		if !slices.Contains(paths, filepath.Join(dir, name)) {
			t.Errorf("%s not written (%v)", name, paths)
		}
	}
	m, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	if !strings.Contains(string(m), "nightly_aiperf_timeslices.csv") {
		t.Errorf("manifest does not list the timeslice CSV")
	}
	html, _ := os.ReadFile(filepath.Join(dir, RunReportFile))
	if !strings.Contains(string(html), "time slices of 2s") {
		t.Errorf("report does not use the 2 s slices")
	}
}

// Too fine a slice loses no export: every other file and the manifest are written,
// without the timeslice files, and the error says so.
func TestExportsTooManySlices(t *testing.T) {
	dir := t.TempDir()
	recs := slicedRun()
	paths, err := WriteExports(dir, Run{Records: recs, Metrics: metricsOf(recs)}, ExportOptions{SliceDuration: time.Microsecond})
	if err == nil || !strings.Contains(err.Error(), "the timeslice exports were not written") {
		t.Errorf("1µs slices: %v; want the too-many-slices error", err)
	}
	tsJSON, _ := TimesliceFiles("")
	for _, want := range []string{AIPerfJSONFile, RunReportFile, ManifestFile} {
		if !slices.Contains(paths, filepath.Join(dir, want)) {
			t.Errorf("%s not written (%v)", want, paths)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, tsJSON)); err == nil {
		t.Errorf("%s written despite the refusal", tsJSON)
	}
}

// The report's charts start on the measured window's slice grid: whole slices back
// from its start over the warm-up, never a slice straddling the start.
func TestChartOrigin(t *testing.T) {
	for _, c := range []struct {
		first, start time.Duration
		width        float64
		want         time.Duration
	}{
		{8 * time.Second, 10 * time.Second, 2, 8 * time.Second},
		{8500 * time.Millisecond, 10 * time.Second, 2, 8 * time.Second},
		{9 * time.Second, 10 * time.Second, 0.3, 8800 * time.Millisecond},
		{10 * time.Second, 10 * time.Second, 2, 10 * time.Second}, // no warm-up
	} {
		if got := chartOrigin(c.first, c.start, c.width); got != c.want {
			t.Errorf("chartOrigin(%v, %v, %g) = %v, want %v", c.first, c.start, c.width, got, c.want)
		}
	}
}
