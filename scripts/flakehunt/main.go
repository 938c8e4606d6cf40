// Command flakehunt tallies the failures of several `go test -json` runs of the whole
// suite, per test. It is there so that a test which fails once in four runs shows as
// such instead of as a red CI run nobody can reproduce. scripts/flakehunt.sh makes the
// runs (quiet ones, then one beside a CPU burner) and calls it:
//
//	go run ./scripts/flakehunt quiet-1.json quiet-2.json quiet-3.json loaded-1.json
//
// Each argument is one run's `go test -json` output; a run's label is the file's base
// name without ".json", and its kind (the text before the first "-") heads a column.
// It prints one row per test that failed in any run, the slowest tests of the runs,
// and exits 1 when any test failed (or a package failed to build or timed out).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	slowest := 20
	if len(args) > 1 && args[0] == "-slowest" {
		if _, err := fmt.Sscan(args[1], &slowest); err != nil || slowest < 0 {
			fmt.Fprintf(stderr, "flakehunt: -slowest %q: want a count >= 0\n", args[1])
			return 2
		}
		args = args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: flakehunt [-slowest N] RUN.json ...")
		return 2
	}
	var runs []*runResult
	for _, path := range args {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, "flakehunt:", err)
			return 2
		}
		r, err := readRun(f, path)
		f.Close()
		if err != nil {
			fmt.Fprintln(stderr, "flakehunt:", err)
			return 2
		}
		runs = append(runs, r)
	}
	t := tally(runs)
	t.write(stdout, slowest)
	if t.failed() {
		return 1
	}
	return 0
}

// event is one line of `go test -json` (test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// runResult is what one run of the suite ended with.
type runResult struct {
	Label, Kind string
	// Failed holds each failing test as "package.TestName" (subtests included), and each
	// package that failed without a failing test (a build error, a panic, a timeout) as
	// "package [package]".
	Failed map[string]bool
	// Passed counts the tests (subtests included) that passed.
	Passed int
	// Elapsed is each top-level test's time in seconds.
	Elapsed map[string]float64
	// Output keeps the last lines each failing test printed.
	Output map[string][]string
}

// maxOutputLines bounds the lines kept per failing test.
const maxOutputLines = 12

func readRun(r io.Reader, path string) (*runResult, error) {
	label := strings.TrimSuffix(filepath.Base(path), ".json")
	kind, _, _ := strings.Cut(label, "-")
	res := &runResult{Label: label, Kind: kind, Failed: map[string]bool{}, Elapsed: map[string]float64{}, Output: map[string][]string{}}
	pkgFailedTests := map[string]bool{}
	out := map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 || b[0] != '{' {
			continue // go test's own lines (a build failure's text)
		}
		var e event
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		name := e.Package
		if e.Test != "" {
			name += "." + e.Test
		}
		switch e.Action {
		case "output":
			o := append(out[name], strings.TrimSpace(e.Output))
			if len(o) > maxOutputLines {
				o = o[len(o)-maxOutputLines:]
			}
			out[name] = o
		case "pass":
			if e.Test != "" {
				res.Passed++
				if !strings.Contains(e.Test, "/") {
					res.Elapsed[name] = e.Elapsed
				}
			}
			delete(out, name)
		case "fail":
			if e.Test != "" {
				res.Failed[name] = true
				res.Output[name] = out[name]
				pkgFailedTests[e.Package] = true
				if !strings.Contains(e.Test, "/") {
					res.Elapsed[name] = e.Elapsed
				}
			} else if !pkgFailedTests[e.Package] {
				res.Failed[e.Package+" [package]"] = true
				res.Output[e.Package+" [package]"] = out[name]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	// A subtest's failure fails its parents too: count only the deepest failing name, so
	// one flake is one row.
	for name := range res.Failed {
		for parent := name; ; {
			i := strings.LastIndex(parent, "/")
			if i < 0 {
				break
			}
			parent = parent[:i]
			delete(res.Failed, parent)
		}
	}
	return res, nil
}

// table is the tally over all runs.
type table struct {
	Kinds  []string       // column order: the kinds in the order first seen
	Runs   map[string]int // runs per kind
	Rows   []row
	Passed []int // tests passed per run
	Labels []string
	Slow   []slow
	Output map[string][]string // per test, the output of the last run that failed it with some
}

type row struct {
	Test  string
	Fails map[string]int // per kind
}

type slow struct {
	Test    string
	Seconds float64 // the largest over the runs
}

func tally(runs []*runResult) *table {
	t := &table{Runs: map[string]int{}, Output: map[string][]string{}}
	rows := map[string]map[string]int{}
	maxElapsed := map[string]float64{}
	for _, r := range runs {
		if t.Runs[r.Kind] == 0 {
			t.Kinds = append(t.Kinds, r.Kind)
		}
		t.Runs[r.Kind]++
		t.Passed = append(t.Passed, r.Passed)
		t.Labels = append(t.Labels, r.Label)
		for name := range r.Failed {
			if rows[name] == nil {
				rows[name] = map[string]int{}
			}
			rows[name][r.Kind]++
			if o := r.Output[name]; len(o) > 0 {
				t.Output[name] = o
			}
		}
		for name, s := range r.Elapsed {
			maxElapsed[name] = max(maxElapsed[name], s)
		}
	}
	for name, f := range rows {
		t.Rows = append(t.Rows, row{name, f})
	}
	slices.SortFunc(t.Rows, func(a, b row) int { return strings.Compare(a.Test, b.Test) })
	for name, s := range maxElapsed {
		t.Slow = append(t.Slow, slow{name, s})
	}
	slices.SortFunc(t.Slow, func(a, b slow) int {
		if a.Seconds != b.Seconds {
			if a.Seconds > b.Seconds {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Test, b.Test)
	})
	return t
}

func (t *table) failed() bool { return len(t.Rows) > 0 }

func (t *table) write(w io.Writer, slowest int) {
	fmt.Fprintf(w, "runs: %s\n", strings.Join(t.Labels, ", "))
	for i, l := range t.Labels {
		fmt.Fprintf(w, "  %s: %d tests passed\n", l, t.Passed[i])
	}
	fmt.Fprintln(w)
	head := "| test |"
	sep := "|---|"
	for _, k := range t.Kinds {
		head += fmt.Sprintf(" failed in %d %s run(s) |", t.Runs[k], k)
		sep += "---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	if len(t.Rows) == 0 {
		line := "| (none) |"
		for range t.Kinds {
			line += " 0 |"
		}
		fmt.Fprintln(w, line)
	}
	for _, r := range t.Rows {
		line := "| " + r.Test + " |"
		for _, k := range t.Kinds {
			line += fmt.Sprintf(" %d |", r.Fails[k])
		}
		fmt.Fprintln(w, line)
	}
	for _, r := range t.Rows {
		if o := t.Output[r.Test]; len(o) > 0 {
			fmt.Fprintf(w, "\n%s, last lines:\n    %s\n", r.Test, strings.Join(o, "\n    "))
		}
	}
	if slowest > 0 && len(t.Slow) > 0 {
		fmt.Fprintf(w, "\nslowest tests (the longest of the runs):\n")
		for _, s := range t.Slow[:min(slowest, len(t.Slow))] {
			fmt.Fprintf(w, "  %7.1fs  %s\n", s.Seconds, s.Test)
		}
	}
}
