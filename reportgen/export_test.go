package reportgen

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testRun() Run {
	recs := syntheticRun(300, 1)
	return Run{Records: recs, Metrics: metricsOf(recs), Manifest: Manifest{
		Version: "test", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Scenario: "synthetic", Seed: 7,
		Config:    map[string]any{"concurrency": 4},
		Tokenizer: &TokenizerInfo{Name: "gpt2", Fingerprint: "sha256:abc"},
		Host:      Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"},
	}}
}

func TestAIPerfJSONGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAIPerfJSON(&b, testRun()); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	// AIPerf's keys and fields, so dashboards that read AIPerf read this.
	var ttft struct {
		Unit              string
		Avg, P1, P50, P99 *float64
		Min, Max, Std     *float64
	}
	if err := json.Unmarshal(got["time_to_first_token"], &ttft); err != nil || ttft.Unit != "ms" || ttft.Avg == nil || ttft.P1 == nil || ttft.P99 == nil || ttft.Std == nil {
		t.Errorf("time_to_first_token = %s, want unit ms with avg, p1…p99, min, max, std", got["time_to_first_token"])
	}
	var rt struct {
		Unit string
		Avg  float64
	}
	if err := json.Unmarshal(got["request_throughput"], &rt); err != nil || rt.Unit != "requests/sec" || rt.Avg <= 0 {
		t.Errorf("request_throughput = %s, want unit requests/sec and avg > 0", got["request_throughput"])
	}
	for _, k := range []string{"benchmark_duration", "request_count", "error_request_count", "total_osl", "start_time", "end_time", "was_cancelled", "error_summary", "input_config"} {
		if _, ok := got[k]; !ok {
			t.Errorf("export lacks %q", k)
		}
	}
	golden(t, "profile_export_aiperf.json", b.Bytes())
}

func TestAIPerfCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAIPerfCSV(&b, testRun().Metrics); err != nil {
		t.Fatal(err)
	}
	sections := strings.Split(b.String(), "\n\n")
	if len(sections) != 2 {
		t.Fatalf("csv has %d sections, want 2 (stats, then single values)", len(sections))
	}
	rows, err := csv.NewReader(strings.NewReader(sections[0])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rows[0], ","), "Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std"; got != want {
		t.Errorf("header = %s, want %s", got, want)
	}
	if rows[1][0] != "Time to First Token (ms)" {
		t.Errorf("first row = %q, want Time to First Token (ms)", rows[1][0])
	}
	if !strings.Contains(sections[1], "Request Throughput (requests/sec),") {
		t.Errorf("single-value section lacks request throughput:\n%s", sections[1])
	}
	golden(t, "profile_export_aiperf.csv", b.Bytes())
}

func TestAIPerfJSONLGolden(t *testing.T) {
	recs := syntheticRun(40, 1)
	recs[0].Warmup = true
	var b bytes.Buffer
	if err := WriteAIPerfJSONL(&b, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 40 {
		t.Fatalf("%d lines, want 40", len(lines))
	}
	var ok, bad struct {
		Metadata struct {
			BenchmarkPhase string `json:"benchmark_phase"`
			RequestStartNs int64  `json:"request_start_ns"`
		}
		Metrics map[string]struct {
			Value any
			Unit  string
		}
		Error *struct {
			Code int
			Type string
		}
	}
	_ = json.Unmarshal([]byte(lines[1]), &ok)
	if ok.Error != nil || ok.Metrics["time_to_first_token"].Unit != "ms" || ok.Metrics["inter_token_latency"].Value == nil || ok.Metadata.RequestStartNs == 0 {
		t.Errorf("successful record = %s, want metrics with TTFT (ms) and ITL, no error", lines[1])
	}
	_ = json.Unmarshal([]byte(lines[36]), &bad)
	if bad.Error == nil || bad.Error.Code != 500 || bad.Metrics["error_isl"].Unit != "tokens" {
		t.Errorf("failed record = %s, want error code 500 and error_isl", lines[36])
	}
	if !strings.Contains(lines[0], `"benchmark_phase":"warmup"`) {
		t.Errorf("warmup record = %s, want benchmark_phase warmup", lines[0])
	}
	golden(t, "profile_export.jsonl", b.Bytes())
}

func TestWriteExports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	run := testRun()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The recording is already in the directory (run.Run's client.jsonl, written
	// as the run went); the exports list it and never copy it.
	if err := WriteFileAtomic(filepath.Join(dir, "client.jsonl"), func(w io.Writer) error { return writeRecords(w, run.Records) }); err != nil {
		t.Fatal(err)
	}
	run.RecordFile = "client.jsonl"
	paths, err := WriteExports(dir, run, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want := []string{AIPerfJSONFile, AIPerfCSVFile, AIPerfJSONLFile, RunReportFile, ManifestFile}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v, want %v (manifest last)", names, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want)+1 {
		t.Errorf("dir has %d entries, want %d (the recording, the exports, no temporary files)", len(entries), len(want)+1)
	}
	var man Manifest
	data, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err := json.Unmarshal(data, &man); err != nil || len(man.Files) != 5 || man.Files[0] != "client.jsonl" || man.Seed != 7 || man.Tokenizer == nil {
		t.Errorf("manifest = %s, want 5 files (the recording first), the seed and the tokenizer", data)
	}
	recs, err := ReadRecords(filepath.Join(dir, "client.jsonl"))
	if err != nil || len(recs) != 300 {
		t.Errorf("ReadRecords = %d records, %v; want 300, nil", len(recs), err)
	}
}

// TestWriteFileAtomicFailure: a failing writer leaves neither the file nor a temp file.
func TestWriteFileAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	err := WriteFileAtomic(p, func(w io.Writer) error {
		_, _ = io.WriteString(w, `{"partial":`)
		return errors.New("disk on fire")
	})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want the writer's error", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dir has %d entries after a failed write, want 0", len(entries))
	}
}

// TestWriteExportsStaleManifest: a failing export into a directory that held an earlier
// complete export leaves no manifest vouching for the mixed files.
func TestWriteExportsStaleManifest(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteExports(dir, testRun(), ExportOptions{NoHTML: true}); err != nil {
		t.Fatal(err)
	}
	// Make the second export fail part-way: a directory where the CSV file goes.
	os.Remove(filepath.Join(dir, AIPerfCSVFile))
	os.Mkdir(filepath.Join(dir, AIPerfCSVFile), 0o755)
	if _, err := WriteExports(dir, testRun(), ExportOptions{NoHTML: true}); err == nil {
		t.Fatal("export over a directory named like a file = nil error, want one")
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("manifest after a failed export: %v, want it gone", err)
	}
}
