package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/reportgen"
)

// gateMock is a mock on 127.0.0.1 with a fixed TTFT (ms) and 5 ms ITL.
func gateMock(t *testing.T, ttft string) string {
	t.Helper()
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Host: "127.0.0.1", Port: 0,
		TTFT: distribution.MustSpec("fixed:" + ttft), ITL: distribution.MustSpec("fixed:5")}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

// TestRegressionGateCLI: a baseline of K runs recorded by profile --num-runs against one
// port gates the same server on another port (exit 0), a slower server (99), A/B
// against it (99); regress re-gates saved directories (0, 99, 3 inconclusive with
// --fail-inconclusive); a baseline of another workload, a bad margin and a missing
// directory are invalid (2) before any request.
//
// The runs are real and share the machine with other tests, so 4–5 runs a side carry
// its noise (between-run CVs of 10–40% under load). The verdicts asked of them are
// ones no load can change: the slow server is 5× slower in TTFT (40 → 200 ms) and is
// gated with --fail-inconclusive, so it fails (99 regressed, or 3 when the runs were too
// noisy to decide) and never passes; the same server is held to a 25% margin. The
// gate's error rates at the default margin are bench/gate's to measure.
func TestRegressionGateCLI(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	a, b, slow := gateMock(t, "40"), gateMock(t, "40"), gateMock(t, "200")
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	work := []string{"--request-count", "20", "--concurrency", "10", "--isl", "16", "--osl", "4", "--random-seed", "3", "-q"}
	profile := func(url string, args ...string) (int, string, string) {
		return cli(t, append(append([]string{"profile", "--url", url}, work...), args...)...)
	}
	if code, out, errOut := profile(a, "--num-profile-runs", "5", "--artifact-dir", at("base")); code != ExitOK {
		t.Fatalf("recording the baseline: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, f := range []string{"runs.json", "run-005/runstats.json", "run-001/client.jsonl"} {
		if _, err := os.Stat(filepath.Join(at("base"), f)); err != nil {
			t.Errorf("baseline: %v", err)
		}
	}
	gate := []string{"--baseline", at("base"), "--num-runs", "4", "--max-runs", "4"}
	same := append(slices.Clone(gate), "--margin", "25%")
	slowGate := append(slices.Clone(gate), "--fail-inconclusive")
	code, out, errOut := profile(b, append(same, "--artifact-dir", at("same"))...)
	if code != ExitOK || strings.Contains(out, "another workload") || !strings.Contains(out, "target differs: urls: baseline "+a) {
		t.Errorf("the same server on another port: exit %d, want 0 with the URLs shown\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(at("same"), reportgen.GateReportFile)); err != nil {
		t.Errorf("gate report: %v", err)
	}
	code, out, errOut = profile(slow, append(slowGate, "--artifact-dir", at("slow"))...)
	if !slowFailed(code, firstOf(out, "regression gate")) {
		t.Errorf("a server 5× slower in TTFT: exit %d, want 99 (or 3)\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = profile(slow, "--baseline-url", a, "--num-runs", "4", "--max-runs", "4", "--fail-inconclusive", "--artifact-dir", at("ab"))
	if !slowFailed(code, firstOf(out, "regression gate")) {
		t.Errorf("A/B, B 5× slower: exit %d, want 99 (or 3)\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(at("ab"), "b", "run-003", "client.jsonl")); err != nil {
		t.Errorf("A/B runs: %v", err)
	}

	// A run that breaks its own assertion fails the gate, whatever the comparison says.
	code, out, errOut = profile(b, append(same, "--artifact-dir", at("broken"), "--assert", "ttft_p50<=1ms")...)
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL: 4 of 4 runs failed an assertion") {
		t.Errorf("runs breaking an assertion: exit %d, want 99\n%s\n%s", code, out, errOut)
	}

	// The scenario file's regression block is the same gate.
	cfg := at("gate.yaml")
	if err := os.WriteFile(cfg, []byte("regression:\n  baseline: "+at("base")+"\n  runs: 4\n  max_runs: 4\n  fail_inconclusive: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = profile(slow, "--config", cfg, "--artifact-dir", at("yaml"))
	if !slowFailed(code, firstOf(out, "regression gate")) {
		t.Errorf("the gate of a scenario file, 5× slower: exit %d, want 99 (or 3)\n%s\n%s", code, out, errOut)
	}

	// regress re-gates saved directories.
	if code, out, errOut := cli(t, "regress", "--margin", "25%", at("base"), at("same")); code != ExitOK {
		t.Errorf("regress base same: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = cli(t, "regress", "--fail-inconclusive", "--html", at("r.html"), at("base"), at("slow"))
	if !slowFailed(code, out) {
		t.Errorf("regress base slow: exit %d, want 99\n%s", code, out)
	}
	if b, err := os.ReadFile(at("r.html")); err != nil || !strings.Contains(string(b), `class="chart-svg dots"`) || !strings.Contains(string(b), `class="band"`) {
		t.Errorf("gate report: %v", err)
	}
	code, out, _ = cli(t, "regress", "--fail-inconclusive", filepath.Join(at("base"), "run-001"), filepath.Join(at("same"), "run-001"))
	if code != ExitInconclusive || !strings.HasPrefix(out, "INCONCLUSIVE regression gate: inconclusive: ") || !strings.Contains(out, "between-run noise not measured") {
		t.Errorf("regress of one run each, --fail-inconclusive: exit %d, want 3\n%s", code, out)
	}
	if code, out, _ := cli(t, "regress", filepath.Join(at("base"), "run-001"), filepath.Join(at("same"), "run-001")); code != ExitOK {
		t.Errorf("regress of one run each: exit %d, want 0 (inconclusive passes)\n%s", code, out)
	}
	// With a prior CV one run each has an interval: a run against itself is proven no
	// regression (at CV 1% the interval's worse end is +4%, inside δ 5%; the run itself,
	// not a second run, so that the machine's own noise cannot move the verdict), and the
	// slower one regressed.
	one := func(side string) string { return filepath.Join(at(side), "run-001") }
	if code, out, _ := cli(t, "regress", "-v", "--prior-cv", "1%", one("base"), one("base")); code != ExitOK || !strings.Contains(out, "assumed the stored between-run CV 1%") || !strings.HasPrefix(out, "PASS regression gate: no regression") {
		t.Errorf("regress of one run against itself, --prior-cv 1%%: exit %d, want 0 and no regression\n%s", code, out)
	}
	// Without -v the passing gate is its headline and one line per gating statistic.
	if code, out, _ := cli(t, "regress", "--prior-cv", "1%", one("base"), one("base")); code != ExitOK || strings.Contains(out, "    ratio:") || strings.Count(out, "\nPASS ") != 4 || !strings.Contains(out, "-v prints them") {
		t.Errorf("regress of one run against itself without -v: exit %d, want 0 and the compact form\n%s", code, out)
	}
	if code, out, _ := cli(t, "regress", "--prior-cv", "2%", one("base"), one("slow")); code != ExitAssertFailed {
		t.Errorf("regress of one run each, 5× slower, --prior-cv 2%%: exit %d, want 99\n%s", code, out)
	}
	if code, _, errOut := cli(t, "regress", "--prior-cv", "-3%", one("base"), one("same")); code != ExitInvalidConfig || !strings.Contains(errOut, "--prior-cv: want a fraction") {
		t.Errorf("--prior-cv -3%%: exit %d, want 2\n%s", code, errOut)
	}

	// A baseline measured against another server version is shown beside the verdict.
	mf := filepath.Join(at("base"), "run-001", reportgen.ManifestFile)
	mb, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	var m reportgen.Manifest
	if err := json.Unmarshal(mb, &m); err != nil || len(m.Servers) == 0 {
		t.Fatalf("baseline manifest: %v, %d servers", err, len(m.Servers))
	}
	if m.Servers[0].Header == "" {
		t.Fatalf("baseline manifest: no Server header recorded: %s", mb)
	}
	m.Servers[0].Header = "old-server/0.1"
	if mb, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mf, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := cli(t, "regress", "--margin", "25%", at("base"), at("same")); code != ExitOK || !strings.Contains(out, "measured with differs: server header: baseline old-server/0.1, current ") {
		t.Errorf("regress against a baseline of another server version: exit %d, want 0 with the difference shown\n%s", code, out)
	}
	code, out, errOut = profile(b, append(same, "--artifact-dir", at("same2"))...)
	if code != ExitOK || !strings.Contains(out, "measured with differs: server header: baseline old-server/0.1, current ") {
		t.Errorf("profile --baseline of another server version: exit %d, want 0 with the difference shown\n%s\n%s", code, out, errOut)
	}

	// Invalid configuration: exit 2, before any request.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"regress", at("base"), at("nothing")}, "holds no runs"},
		{[]string{"regress", at("base")}, "want two directories"},
		{append(append([]string{"profile", "--url", b}, work...), "--isl", "32", "--baseline", at("base"), "--artifact-dir", at("other")), "is another workload: isl: baseline"},
		{append(append([]string{"profile", "--url", b}, work...), "--baseline", at("base"), "--margin", "500%"), "--margin: want a fraction like 5% or 0.05"},
		{append(append([]string{"profile", "--url", b}, work...), "--baseline", at("nothing")), "holds no runs"},
	} {
		code, out, errOut := cli(t, c.args...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s\n%s", c.args, code, c.want, out, errOut)
		}
	}
	if _, err := os.Stat(at("other")); err == nil {
		if ents, _ := os.ReadDir(at("other")); len(ents) > 0 {
			t.Errorf("another workload: the refused gate ran (%d files in its directory)", len(ents))
		}
	}
}

// firstOf returns the first line of s that contains sub ("" if none).
func firstOf(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// slowFailed reports whether a gate of the 5× slower server failed on TTFT p50: exit 99
// with "regressed: TTFT p50 +" first, or, when the machine's noise left it undecided,
// exit 3 (--fail-inconclusive) with "inconclusive: TTFT p50 +".
func slowFailed(code int, headline string) bool {
	switch code {
	case ExitAssertFailed:
		return strings.HasPrefix(headline, "FAIL regression gate: regressed: ")
	case ExitInconclusive:
		return strings.HasPrefix(headline, "INCONCLUSIVE regression gate: inconclusive: TTFT p50 +")
	}
	return false
}
