package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Runs as go test -json writes them: a subtest failure (which fails its parent), a
// package that fails without a failing test (a panic in init, a build error, a
// timeout), a pass, and a test that fails in one run only.
const (
	quiet1 = `{"Action":"run","Package":"p/a","Test":"TestA"}
{"Action":"output","Package":"p/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p/a","Test":"TestA","Elapsed":3.5}
{"Action":"run","Package":"p/a","Test":"TestB"}
{"Action":"run","Package":"p/a","Test":"TestB/sub"}
{"Action":"output","Package":"p/a","Test":"TestB/sub","Output":"    b_test.go:12: got 1, want 2\n"}
{"Action":"fail","Package":"p/a","Test":"TestB/sub","Elapsed":0.1}
{"Action":"fail","Package":"p/a","Test":"TestB","Elapsed":0.2}
{"Action":"fail","Package":"p/a","Elapsed":4}
{"Action":"output","Package":"p/c","Output":"panic: test timed out after 30m0s\n"}
{"Action":"fail","Package":"p/c","Elapsed":1800}
`
	quiet2 = `{"Action":"pass","Package":"p/a","Test":"TestA","Elapsed":4.5}
{"Action":"pass","Package":"p/a","Test":"TestB","Elapsed":0.2}
{"Action":"pass","Package":"p/a","Test":"TestB/sub","Elapsed":0.1}
{"Action":"pass","Package":"p/a","Elapsed":5}
{"Action":"pass","Package":"p/c","Test":"TestC","Elapsed":1}
{"Action":"pass","Package":"p/c","Elapsed":1}
`
	loaded1 = `# p/d
d.go:3:1: syntax error
{"Action":"fail","Package":"p/a","Test":"TestB/sub","Elapsed":0.1}
{"Action":"fail","Package":"p/a","Test":"TestB","Elapsed":0.2}
{"Action":"fail","Package":"p/a","Elapsed":4}
`
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTally(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-slowest", "2",
		write(t, dir, "quiet-1.json", quiet1), write(t, dir, "quiet-2.json", quiet2), write(t, dir, "loaded-1.json", loaded1)}
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != 1 {
		t.Errorf("exit %d, want 1 (tests failed); stderr %s", code, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"| test | failed in 2 quiet run(s) | failed in 1 loaded run(s) |",
		"| p/a.TestB/sub | 1 | 1 |", // one row per flake: the subtest, not its parent
		"| p/c [package] | 1 | 0 |", // a package that failed with no failing test
		"p/a.TestB/sub, last lines:\n    b_test.go:12: got 1, want 2",
		"p/c [package], last lines:\n    panic: test timed out",
		"     4.5s  p/a.TestA",
		"  quiet-2: 4 tests passed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"| p/a.TestB |", "TestB/sub  "} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, got)
		}
	}
	if strings.Count(got, "s  p/") != 2 {
		t.Errorf("-slowest 2 printed %d slow tests:\n%s", strings.Count(got, "s  p/"), got)
	}
}

func TestTallyAllGreen(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{write(t, dir, "quiet-1.json", quiet2)}, &out, &errOut); code != 0 {
		t.Errorf("exit %d, want 0; %s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "| (none) | 0 |") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestTallyBadInput(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "quiet-1.json", "{\"Action\":\"pass\"}\n{\"Action\":\n")
	var out, errOut bytes.Buffer
	if code := run([]string{p}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "quiet-1.json:2:") {
		t.Errorf("exit %d, stderr %q; want 2 naming quiet-1.json:2", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{filepath.Join(dir, "missing.json")}, &out, &errOut); code != 2 {
		t.Errorf("a missing file: exit %d, want 2", code)
	}
	if code := run(nil, &out, &errOut); code != 2 {
		t.Errorf("no runs: exit %d, want 2", code)
	}
}
