package reportgen

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
)

// serverRecording makes n mock-server records with ISL ~ Normal(mu, 12) and OSL ~ U[20,60].
func serverRecording(n int, mu float64, seed uint64, mode string) []record.Server {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]record.Server, n)
	for i := range out {
		out[i] = record.Server{TS: 1.76e9 + float64(i)*0.05, RequestID: itoa(i), Endpoint: "/v1/chat/completions", Model: "mock",
			ISL: int(mu + 12*rng.NormFloat64()), Stream: true, TokenizationMode: mode, Seq: uint64(i + 1), Status: 200,
			OSL: 20 + rng.IntN(41), FinishReason: "length"}
	}
	out[n-1].Rejected, out[n-1].TokenizationMode = "invalid_json", record.ModeNone
	return out
}

func summaryWithVocab(top []record.TopToken, total int) *record.ServerSummary {
	freq := map[string]int{}
	for _, t := range top {
		freq[itoa(t.ID)] = t.Count
	}
	return &record.ServerSummary{TotalRequests: 200, PerEndpoint: map[string]record.EndpointSummary{
		"/v1/chat/completions": {Count: 200, VocabDistribution: &record.VocabDistribution{VocabSize: 50257, TotalTokens: total,
			EntropyBits: 9.5, TopTokens: top, Frequencies: freq}},
	}}
}

func compareFixture() (Recording, Recording) {
	a := RecordingFromServer("baseline", serverRecording(200, 128, 1, record.ModeChatTemplate),
		summaryWithVocab([]record.TopToken{{ID: 262, Text: " the", Count: 900}, {ID: 11, Text: ",", Count: 700}, {ID: 13, Text: ".", Count: 500}}, 20000))
	b := RecordingFromServer("candidate", serverRecording(200, 140, 2, record.ModeChatTemplateFallback),
		summaryWithVocab([]record.TopToken{{ID: 262, Text: " the", Count: 1200}, {ID: 13, Text: ".", Count: 300}, {ID: 286, Text: " of", Count: 250}}, 21000))
	return a, b
}

func TestCompareReportGolden(t *testing.T) {
	a, b := compareFixture()
	var buf bytes.Buffer
	if err := WriteCompareReport(&buf, a, b, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`id="isl-hist"`, `id="osl-hist"`, `fill-opacity="0.45"`, "chat_template_fallback", `id="vocab"`, "&#34; of&#34;",
		"Kolmogorov", "differ (p &lt; 0.05)"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare report lacks %q", want)
		}
	}
	if len(a.ISL) != 199 {
		t.Errorf("baseline has %d requests, want 199 (the rejected one left out)", len(a.ISL))
	}
	golden(t, "compare_report.html", buf.Bytes())
}

// TestCompareSameDistribution: two samples of one distribution are not called different.
func TestCompareSameDistribution(t *testing.T) {
	a := RecordingFromServer("a", serverRecording(300, 128, 3, record.ModeChatTemplate), nil)
	b := RecordingFromServer("b", serverRecording(300, 128, 4, record.ModeChatTemplate), nil)
	for _, r := range twoSampleTests(ints(a.ISL), ints(b.ISL), 0.01) {
		if r.Class != "pass" {
			t.Errorf("%s on one distribution: %s (p=%s), want consistent at alpha=0.01", r.Test, r.Verdict, r.PValue)
		}
	}
	var buf bytes.Buffer
	if err := WriteCompareReport(&buf, a, b, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `id="vocab-note"`) {
		t.Error("without summaries the report should say there is no vocabulary to compare")
	}
}

func TestLoadRecording(t *testing.T) {
	dir := t.TempDir()
	// server recording + summary companion
	srv := serverRecording(50, 100, 5, record.ModeChatTemplate)
	var sb bytes.Buffer
	for i := range srv {
		sb.Write(srv[i].AppendJSON(nil))
		sb.WriteByte('\n')
	}
	sp := filepath.Join(dir, "rec.jsonl")
	os.WriteFile(sp, sb.Bytes(), 0o644)
	sum, _ := json.Marshal(summaryWithVocab([]record.TopToken{{ID: 1, Text: "x", Count: 3}}, 3))
	os.WriteFile(sp+".summary.json", sum, 0o644)
	// client records and AIPerf export
	run := testRun()
	cp := filepath.Join(dir, RecordsFile)
	WriteFileAtomic(cp, func(w io.Writer) error { return writeRecords(w, run.Records) })
	ap := filepath.Join(dir, AIPerfJSONLFile)
	WriteFileAtomic(ap, func(w io.Writer) error { return WriteAIPerfJSONL(w, run.Records) })
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"hello":1}`+"\n"), 0o644)

	for _, tc := range []struct {
		path, kind string
		n          int
		summary    bool
	}{{sp, "server", 49, true}, {cp, "client", 292, false}, {ap, "aiperf", 292, false}} {
		r, err := LoadRecording(tc.path, "")
		if err != nil {
			t.Errorf("LoadRecording(%s): %v", filepath.Base(tc.path), err)
			continue
		}
		if r.Kind != tc.kind || len(r.ISL) != tc.n || (r.Summary != nil) != tc.summary || r.Label != filepath.Base(tc.path) {
			t.Errorf("LoadRecording(%s) = kind %s, %d requests, summary %v, label %q; want %s, %d, %v, base name",
				filepath.Base(tc.path), r.Kind, len(r.ISL), r.Summary != nil, r.Label, tc.kind, tc.n, tc.summary)
		}
	}
	// a run directory: the mock's recording wins, labelled with the directory's name
	runDir := filepath.Join(dir, "run7")
	os.Mkdir(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, "server.jsonl"), sb.Bytes(), 0o644)
	os.WriteFile(filepath.Join(runDir, RecordsFile), []byte("{}\n"), 0o644)
	if r, err := LoadRecording(runDir, ""); err != nil || r.Kind != "server" || r.Label != "run7" {
		t.Errorf("LoadRecording(dir) = %s %q, %v; want the server recording labelled run7", r.Kind, r.Label, err)
	}
	if _, err := LoadRecording(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "without a recording") {
		t.Errorf("LoadRecording(empty dir) error = %v, want one saying there is no recording", err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "missing.jsonl")} {
		if _, err := LoadRecording(p, ""); err == nil || !strings.Contains(err.Error(), filepath.Base(p)) {
			t.Errorf("LoadRecording(%s) error = %v, want one naming the file", filepath.Base(p), err)
		}
	}
}

// Chat client records carry tokenization_mode and chunks, as server records carry
// tokenization_mode and a count of chunks: they are read as client records, by file and
// by run directory (client.jsonl only, as a run against a real server leaves). A line
// of AIPerf's mock-server recorder (only the fields both recorders share) is still a
// server recording.
func TestLoadRecordingChatClient(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	for i := range 3 {
		rec := record.Client{Index: i, RequestID: itoa(i), Endpoint: "chat", Stream: true, RunStartUnixNano: 1, Sent: 1, Done: 3,
			Chunks: []record.Chunk{{T: 2, Tokens: 1, Choices: true}}, Status: 200, ISL: 10 + i, ISLTemplate: 17 + i,
			TokenizationMode: record.ModeChatTemplate, ISLExact: true, OSL: 1}
		b.Write(append(rec.AppendJSON(nil), '\n'))
	}
	p := filepath.Join(dir, "client.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, dir} {
		r, err := LoadRecording(path, "")
		if err != nil || r.Kind != "client" || !slices.Equal(r.ISL, []int{10, 11, 12}) {
			t.Errorf("LoadRecording(%s) = kind %q, ISL %v, %v; want client, [10 11 12]", path, r.Kind, r.ISL, err)
		}
	}
	aiperf := filepath.Join(dir, "aiperf-mock.jsonl")
	line := `{"ts":1.7e9,"request_id":"a","endpoint":"/v1/chat/completions","model":"m","isl":12,"requested_osl":4,"stream":true,"tokenization_mode":"chat_template"}`
	if err := os.WriteFile(aiperf, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := LoadRecording(aiperf, ""); err != nil || r.Kind != "server" || !slices.Equal(r.ISL, []int{12}) {
		t.Errorf("LoadRecording(AIPerf recorder line) = kind %q, ISL %v, %v; want server, [12]", r.Kind, r.ISL, err)
	}
}

// A client recording whose first line is over 64 MiB (bufio.Scanner's old limit, where
// compare said "no records") loads with every request.
func TestLoadRecordingLongFirstLine(t *testing.T) {
	testutil.Long(t) // make test-long
	p := filepath.Join(t.TempDir(), "client.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("m", 65<<20)
	for i, model := range []string{huge, "small"} {
		rec := record.Client{Index: i, RequestID: itoa(i), Model: model, Sent: 1, Done: 2, ISL: 10 + i, OSL: 5}
		if _, err := f.Write(append(rec.AppendJSON(nil), '\n')); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := LoadRecording(filepath.Dir(p), "")
	if err != nil {
		t.Fatalf("LoadRecording(long first line) = %v", err)
	}
	if len(rec.ISL) != 2 || rec.ISL[1] != 11 {
		t.Errorf("LoadRecording(long first line).ISL = %v; want [10 11]", rec.ISL)
	}
}

// writeRecords writes recs as record.Client lines (a client.jsonl).
func writeRecords(w io.Writer, recs []record.Client) error {
	enc := record.NewEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return enc.Flush()
}
