package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/reportgen"
)

// unescape undoes the markdown escapes of a summary line, to compare it with the
// console's text.
func unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\_`, `_`, `\*`, `*`, `\|`, `|`, `\#`, `#`, `\[`, `[`, `\]`, `]`, "\\`", "`", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// headlineOf is the summary's marked headline (its first line after the title), as
// the console prints it: "MARK headline", or the console's line when it starts with
// its mark ("FAIL: 1 of 2 assertion(s)").
func headlineOf(md string) string {
	for _, l := range strings.Split(md, "\n") {
		if rest, ok := strings.CutPrefix(l, "**"); ok {
			mark, head, _ := strings.Cut(rest, "**")
			return mark + unescape(head)
		}
	}
	return ""
}

// --summary-md writes the answer the console printed, as markdown, for profile,
// regress, compare and history check; $GITHUB_STEP_SUMMARY gets the same appended,
// one after the other; the links are relative to the summary's directory.
func TestSummaryMD(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	step := at("step_summary.md")
	t.Setenv(reportgen.EnvStepSummary, step)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// profile: one run, an assertion failing.
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--request-count", "8", "--concurrency", "2", "--osl", "4", "--artifact-dir", at("run"),
		"--assert", "ttft_p50<=1us", "--summary-md", at("profile.md"))
	if code != ExitAssertFailed {
		t.Fatalf("profile: exit %d\n%s\n%s", code, out, errOut)
	}
	md := read(at("profile.md"))
	answer := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAIL: ") {
			answer = l
		}
	}
	if answer == "" || headlineOf(md) != answer {
		t.Errorf("profile summary's headline %q; want the console's %q\n%s", headlineOf(md), answer, md)
	}
	for _, want := range []string{"### perfgate profile: ", "| TTFT p50 | – |", "**FAIL** TTFT p50", "[report](run/report.html)", "**Validity**"} {
		if !strings.Contains(md, want) {
			t.Errorf("profile summary lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(read(step), "### perfgate profile: ") {
		t.Errorf("$%s lacks the profile summary", reportgen.EnvStepSummary)
	}

	// regress: one run on each side, the same run: inconclusive (no between-run noise).
	code, out, errOut = cli(t, "regress", at("run"), at("run"), "--html", "-", "--summary-md", at("regress.md"))
	if code != ExitOK {
		t.Fatalf("regress: exit %d\n%s\n%s", code, out, errOut)
	}
	md = read(at("regress.md"))
	if first, _, _ := strings.Cut(out, "\n"); headlineOf(md) != first {
		t.Errorf("regress summary's headline %q; want the console's %q", headlineOf(md), first)
	}
	if !strings.Contains(md, "| statistic | baseline | current | change | interval | verdict |") || !strings.Contains(md, "| TTFT p50 |") {
		t.Errorf("regress summary has no statistics table:\n%s", md)
	}

	// compare: a run with itself is identical.
	code, out, errOut = cli(t, "compare", at("run"), at("run"), "--out", at("compare.html"), "--summary-md", at("compare.md"))
	if code != ExitOK {
		t.Fatalf("compare: exit %d\n%s\n%s", code, out, errOut)
	}
	md = read(at("compare.md"))
	if !strings.Contains(out, strings.TrimPrefix(headlineOf(md), "PASS ")) || !strings.HasPrefix(headlineOf(md), "PASS identical") ||
		!strings.Contains(md, "[comparison report](compare.html)") || !strings.Contains(md, "| ISL mean (tokens) |") {
		t.Errorf("compare summary:\n%s\nconsole:\n%s", md, out)
	}

	// history check: a series stepping 12% slower in its newest results regresses.
	db := at("history.db")
	seedSeries(t, db, "drifting", 24, 18, 0.12)
	code, out, errOut = cli(t, "history", "check", "--db", db, "--scenario", "drifting", "--summary-md", at("history.md"))
	if code != ExitAssertFailed {
		t.Fatalf("history check: exit %d\n%s\n%s", code, out, errOut)
	}
	md = read(at("history.md"))
	if !strings.Contains(errOut, strings.TrimPrefix(headlineOf(md), "FAIL ")) || !strings.HasPrefix(headlineOf(md), "FAIL 1 regression(s) beyond 5%") {
		t.Errorf("history summary's headline %q; want the console's error %q", headlineOf(md), errOut)
	}
	if !strings.Contains(md, "**History**") || !strings.Contains(md, "drifting ttft\\_p50 `") || !strings.Contains(md, "**REGRESSION** drifting ttft\\_p50 regressed") {
		t.Errorf("history summary lacks the sparkline or the regression:\n%s", md)
	}

	// Every summary went to $GITHUB_STEP_SUMMARY too, appended in order.
	all := read(step)
	var titles []string
	for _, l := range strings.Split(all, "\n") {
		if strings.HasPrefix(l, "### ") {
			titles = append(titles, strings.TrimSuffix(strings.Fields(l)[2], ":"))
		}
	}
	if strings.Join(titles, ",") != "profile,regress,compare,history" {
		t.Errorf("step summary titles %v; want profile, regress, compare, history in order", titles)
	}
}

// A --summary-md FILE that cannot be written fails a run that passed (exit 1, the
// reason on stderr), and never hides the run's own failure.
func TestSummaryMDUnwritable(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-such-dir", "s.md")
	code, _, errOut := cli(t, "profile", "--mock", "-q", "--request-count", "4", "--osl", "4", "--artifact-dir", filepath.Join(dir, "run"), "--summary-md", bad)
	if code != ExitRuntime || !strings.Contains(errOut, "--summary-md "+bad) {
		t.Errorf("passing run, unwritable summary: exit %d, stderr %q; want 1 naming the flag", code, errOut)
	}
	code, _, errOut = cli(t, "profile", "--mock", "-q", "--request-count", "8", "--osl", "4", "--artifact-dir", filepath.Join(dir, "run2"), "--summary-md", bad, "--assert", "ttft_p50<=1us")
	if code != ExitAssertFailed || !strings.Contains(errOut, "--summary-md") {
		t.Errorf("failing run, unwritable summary: exit %d, stderr %q; want 99 and the summary's error", code, errOut)
	}
}

// profile --history puts the series' sparklines in its summary: after two results,
// each primary statistic's line has two bars.
func TestSummaryMDHistory(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	for i, c := range []string{"aaaaaaa1", "bbbbbbb2"} {
		code, out, errOut := cli(t, "profile", "--mock", "-q", "--request-count", "6", "--concurrency", "2", "--osl", "4", "--name", "nightly",
			"--artifact-dir", filepath.Join(dir, c), "--history", db, "--commit", c, "--summary-md", filepath.Join(dir, "s.md"))
		if code != ExitOK {
			t.Fatalf("profile %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "s.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(l, "- nightly ttft\\_p50 `") {
			line = l
		}
	}
	spark, _, _ := strings.Cut(strings.TrimPrefix(line, "- nightly ttft\\_p50 `"), "`")
	if !strings.Contains(string(md), "**History**") || len([]rune(spark)) != 2 || !strings.Contains(line, "of 2 results") {
		t.Errorf("summary's history line %q (sparkline %q); want two bars over 2 results:\n%s", line, spark, md)
	}
}
