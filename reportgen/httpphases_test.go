package reportgen

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// withPhases gives a synthetic run's records HTTP phases: the first a new TLS
// connection, the rest reused.
func withPhases(recs []record.Client) []record.Client {
	for i := range recs {
		r := &recs[i]
		r.Written, r.Blocked, r.ConnReused = r.Sent+50*time.Microsecond, 3*time.Microsecond, i > 0
		if r.FirstByte == 0 {
			r.FirstByte = r.Sent + (r.Done-r.Sent)/2
		}
		if i == 0 {
			r.DNSLookup, r.Connecting, r.TLSHandshaking = time.Millisecond, 4*time.Millisecond, 3*time.Millisecond
		}
	}
	return recs
}

// TestRunReportHTTPPhases: a run with phases gets an "HTTP phases" section with
// their rows, out of the summary table; a run without them gets neither.
func TestRunReportHTTPPhases(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRunReport(&b, withPhases(syntheticRun(50, 1)), nil, RunReportOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	i := strings.Index(page, `<table id="http-phases">`)
	if i < 0 {
		t.Fatalf("no HTTP phases table in the report of a run with phases")
	}
	phases := page[i : i+strings.Index(page[i:], "</table>")]
	for _, row := range []string{"HTTP Blocked (ms)", "HTTP DNS Lookup (ms)", "HTTP TLS Handshaking (ms)", "HTTP Waiting (ms)", "HTTP Receiving (ms)", "HTTP Connection Reused"} {
		if !strings.Contains(phases, row) {
			t.Errorf("the HTTP phases table lacks %q", row)
		}
	}
	j := strings.Index(page, `<table id="summary">`)
	if summary := page[j : j+strings.Index(page[j:], "</table>")]; strings.Contains(summary, "HTTP ") {
		t.Errorf("the summary table still lists HTTP phases")
	}
	b.Reset()
	if err := WriteRunReport(&b, syntheticRun(50, 1), nil, RunReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "http-phases") {
		t.Errorf("a run without phases has an HTTP phases section")
	}
}

// TestAIPerfJSONLHTTPPhases: each profile_export.jsonl line of a request with phases
// carries them under AIPerf's http_req_* names, in ms.
func TestAIPerfJSONLHTTPPhases(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAIPerfJSONL(&b, withPhases(syntheticRun(3, 1))); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(b.String(), "\n", 2)[0]
	for _, want := range []string{`"http_req_tls_handshaking":{"value":3,"unit":"ms"}`, `"http_req_dns_lookup":{"value":1,"unit":"ms"}`, `"http_req_waiting":{`, `"http_req_connection_reused":{"value":0,`} {
		if !strings.Contains(first, want) {
			t.Errorf("the first line lacks %s:\n%s", want, first)
		}
	}
}
