package reportgen

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunReportGolden(t *testing.T) {
	var b bytes.Buffer
	m := &Manifest{Version: "test", Scenario: "synthetic", Seed: 7, Tokenizer: &TokenizerInfo{Name: "gpt2", Fingerprint: "sha256:abc"},
		Host: Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"}}
	if err := WriteRunReport(&b, syntheticRun(300, 1), m, RunReportOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`id="ttft-hist"`, `id="ttft-ecdf"`, `id="itl-time"`, `id="token-throughput"`, `id="error-timeline"`, "http_status 500"} {
		if !strings.Contains(out, want) {
			t.Errorf("run report lacks %s", want)
		}
	}
	golden(t, "run_report.html", b.Bytes())
}
