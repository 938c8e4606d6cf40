package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// classesFile writes a scenario file of two traffic classes against the mock.
func classesFile(t *testing.T, classes string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "classes.yaml")
	body := "name: mixed\nseed: 5\nmock:\n  ttft_ms: fixed:1\n  itl_ms: fixed:0.1\nclasses:\n" + classes
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProfileClasses: `perfgate profile --config FILE` runs a scenario file's classes
// as one run, printing a console table per class and judging a rule scoped to a
// class; a class with no load, two classes with one name and a load flag beside
// classes are exit 2, naming the class (FILE:LINE) or the flag's field.
func TestProfileClasses(t *testing.T) {
	two := "  - name: chat\n    rate: 200\n    requests: 20\n    isl: fixed:16\n    osl: fixed:4\n" +
		"  - name: batch\n    concurrency: 2\n    requests: 20\n    start: 10ms\n    isl: fixed:32\n    osl: fixed:8\n"
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--config", classesFile(t, two), "--artifact-dir", art, "--assert", "error_rate{class=batch}<=0")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"perfgate | class batch", "perfgate | class chat", "PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output has no %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(art, "client.jsonl"))
	if err != nil || strings.Count(string(b), `"class":"chat"`) != 20 || strings.Count(string(b), `"class":"batch"`) != 20 {
		t.Errorf("client.jsonl: %d chat and %d batch records (%v), want 20 each", strings.Count(string(b), `"class":"chat"`), strings.Count(string(b), `"class":"batch"`), err)
	}
	for _, c := range []struct {
		name, classes string
		args          []string
		want          string
	}{
		{"no load", "  - name: chat\n    rate: 5\n  - name: batch\n    requests: 4\n", nil, `classes.yaml:9:5: classes[1] "batch": no load`},
		{"duplicate", "  - name: chat\n    rate: 5\n  - name: chat\n    concurrency: 1\n", nil, `classes.yaml:9:11: classes[1] "chat": the name "chat" is also classes[0]'s`},
		{"flag", "  - name: chat\n    rate: 5\n", []string{"--concurrency", "4"}, "concurrency set at the top level: with classes, each class has its own"},
	} {
		args := append([]string{"profile", "--mock", "--config", classesFile(t, c.classes), "--artifact-dir", filepath.Join(t.TempDir(), "run")}, c.args...)
		code, out, errOut := cli(t, args...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 with %q\n%s", c.name, code, errOut, c.want, out)
		}
	}
}
