package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// TestSimulatedHarness runs the benchmark's harness end to end on simulated run
// statistics (no mock): every setting prints a row, identical pairs at CV 0% never
// fail, and a 10% slowdown at CV 3% is caught.
func TestSimulatedHarness(t *testing.T) {
	var b strings.Builder
	if err := run([]string{"-simulate", "-pairs", "6", "-slow-pairs", "4", "-cvs", "0,0.03", "-burn-cpus", "0", "-workers", "1"}, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| 10% slower, CV 3%, δ 5%, ≤ 10 runs/side | 4 | 4/4 = 100.0%",
		"| identical, CV 0%, quiet | 6 | 0/6 = 0.0%",
		"| identical, CV 3%, quiet | 6 |",
		"not evaluated (simulated)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// -ab adds, per CV, identical pairs with the burner beside both sides; simulated, no
// burner runs.
func TestSimulatedAB(t *testing.T) {
	var b strings.Builder
	if err := run([]string{"-simulate", "-ab", "-pairs", "4", "-slow-pairs", "0", "-cvs", "0", "-workers", "1"}, &b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| identical, CV 0%, CPU burner beside both sides (A/B) | 2 | 0/2 = 0.0%",
		"| identical, CV 0%, CPU burner beside current | 2 |",
		"| identical, CV 0%, quiet | 2 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var b strings.Builder
	for _, args := range [][]string{{"-cvs", "x"}, {"-pairs", "0"}, {"-requests", "1"}} {
		if err := run(append([]string{"-simulate"}, args...), &b); err == nil {
			t.Errorf("run(%q) accepted", args)
		}
	}
}

func TestSelected(t *testing.T) {
	for _, c := range []struct {
		name, only string
		want       bool
	}{
		{"identical, CV 5%, quiet", "", true},
		{"identical, CV 5%, quiet", "CV 5%", true},
		{"10% slower, CV 3%, δ 5%", "CV 5%", false},
		{"5% slower, CV 2%", "5% slower|CV 0%", true},
		{"identical, CV 2%, CPU burner beside current", "CV 2%, quiet|CV 0%", false},
		// "=NAME" selects that setting alone, not those whose name it starts.
		{"identical, CV 3%, session offsets sd CV", "=identical, CV 3%, session offsets sd CV", true},
		{"identical, CV 3%, session offsets sd CV/2", "=identical, CV 3%, session offsets sd CV", false},
		{"identical, CV 3%, session offsets sd CV/2", "sd CV", true},
	} {
		if got := selected(c.name, c.only); got != c.want {
			t.Errorf("selected(%q, %q) = %v, want %v", c.name, c.only, got, c.want)
		}
	}
}

func TestParseAutogroup(t *testing.T) {
	for in, want := range map[string]string{"/autogroup-1722 nice -15\n": "-15", "/autogroup-3 nice 0": "0", "": "", "/autogroup-3 nice x": "", "garbage": ""} {
		if got := parseAutogroup(in); got != want {
			t.Errorf("parseAutogroup(%q) = %q, want %q", in, got, want)
		}
	}
}

// families runs the gate on constructed pairs: every selected setting prints a row with
// its false alarms and their bound, and a slowdown far beyond the noise is caught.
func TestFamilies(t *testing.T) {
	var b strings.Builder
	if err := families([]string{"-pairs", "40", "-cvs", "0.03", "-only", "10% slower|CV 3%, independent|CV 3%, session offsets sd CV/2", "-sessions", "10", "-session-runs", "5"}, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| 10% slower, CV 3%, δ 5%, ≤ 10 runs | 40 | ",
		"| identical, CV 3%, independent, normal | 40 | 0/40 = 0.00% (≤ 8.81%) |",
		"| identical, CV 3%, session offsets sd CV/2 | 40 |",
		"| identical, CV 3%, independent, normal, one-session baseline of 5 | 40 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "10% slower, CV 3%, δ 5%, ≤ 10 runs | 40 | 40/40") && !strings.Contains(out, "10% slower, CV 3%, δ 5%, ≤ 10 runs | 40 | 39/40") {
		t.Errorf("a 10%% slowdown at CV 3%% caught in fewer than 39 of 40 pairs:\n%s", out)
	}
	for _, args := range [][]string{{"-cvs", "0"}, {"-pairs", "0"}, {"-session-runs", "1"}} {
		if err := families(args, &b); err == nil {
			t.Errorf("families(%q) accepted", args)
		}
	}
}

// The real mode at a tiny size, for its machinery, not its rates: each run is labelled
// with its drawn session and gets the drawn factor, the factor reaches the mock's
// latencies (a run given a larger factor measures a proportionally larger TTFT and ITL),
// and the table prints the real row beside the simulation's.
func TestRealMachinery(t *testing.T) {
	o, err := parseReal([]string{"-pairs", "2", "-cvs", "0.3", "-only", "CV 30%, independent", "-sessions", "2", "-session-runs", "3",
		"-start", "2", "-cap", "4", "-requests", "8", "-concurrency", "4", "-ttft-ms", "20", "-itl-ms", "10", "-workers", "2", "-sim-pairs", "20"})
	if err != nil {
		t.Fatal(err)
	}
	ss := o.settings()
	if len(ss) != 1 || ss[0].name != "identical, CV 30%, independent, normal" {
		t.Fatalf("settings %v, want the one selected", ss)
	}
	var runs []realRun
	o.onRun = func(r realRun) { runs = append(runs, r) } // runJobs calls it under its lock
	var b strings.Builder
	if err := o.run(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()

	// Every run got its pair's drawn factor and session, in the default flow's shape.
	type key struct {
		pair int
		side string
	}
	count := map[key]int{}
	for _, r := range runs {
		count[key{r.pair, r.side}]++
		d := o.fam.draw(ss[0], r.pair)
		pl := d.baseRuns
		if r.side == "current" {
			pl = d.curRuns
		}
		if r.n >= len(pl) {
			t.Fatalf("pair %d %s run %d beyond the %d drawn", r.pair, r.side, r.n, len(pl))
		}
		want := pl[r.n]
		if math.Abs(r.scale-math.Exp(want.y)) > 1e-12 || r.stats.Session != want.session {
			t.Errorf("pair %d %s run %d: factor %v session %q, want %v %q", r.pair, r.side, r.n, r.scale, r.stats.Session, math.Exp(want.y), want.session)
		}
		wantSession := "c"
		if r.side == "baseline" {
			wantSession = fmt.Sprintf("b%d", r.n/3) // 3 runs a session
		}
		if r.stats.Session != wantSession {
			t.Errorf("pair %d %s run %d in session %q, want %q", r.pair, r.side, r.n, r.stats.Session, wantSession)
		}
	}
	for p := range 2 {
		if c := count[key{p, "baseline"}]; c != 6 {
			t.Errorf("pair %d: %d baseline runs, want 2 sessions × 3", p, c)
		}
		if c := count[key{p, "current"}]; c != 2 && c != 4 {
			t.Errorf("pair %d: %d current runs, want a look's (2 or 4)", p, c)
		}
	}

	// The factor reaches the mock: log latency against log factor has a clear slope
	// (the drawn factors span about 0.5–2). On a quiet machine it is about 1; a busy one
	// adds its own delay to every latency, which flattens it (0.57 measured at load 20),
	// while a factor that never reached the mock leaves it near 0.
	for _, stat := range []string{"ttft_p50", "itl_p50"} {
		var xs, ys []float64
		for _, r := range runs {
			xs = append(xs, math.Log(r.scale))
			ys = append(ys, math.Log(r.stats.Stats[stat]))
		}
		if s := slope(xs, ys); !(s > 0.3 && s < 1.4) {
			t.Errorf("%s: slope of log latency on log factor %.2f over %d runs, want 0.3–1.4 (about 1 on a quiet machine)", stat, s, len(runs))
		}
	}

	for _, want := range []string{
		"| setting | runs by | pairs |",
		"| identical, CV 30%, independent, normal | real runs | 2 | ",
		"| identical, CV 30%, independent, normal | simulated, the same 2 pairs | 2 | ",
		"| identical, CV 30%, independent, normal | simulated, 20 pairs | 20 | ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The real row counts the runs measured (after the target, before the wall time).
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "| real runs |") && !strings.Contains(line, fmt.Sprintf("met | %d | ", len(runs))) {
			t.Errorf("the real row does not count the %d runs measured:\n%s", len(runs), line)
		}
	}
}

// slope is the least-squares slope of ys on xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	return sxy / sxx
}

// The machinery check's slope fails where latency ignores the factor.
func TestSlope(t *testing.T) {
	xs := []float64{-0.5, -0.1, 0, 0.3, 0.6}
	flat := []float64{1, 1, 1, 1, 1}
	double := []float64{-1, -0.2, 0, 0.6, 1.2}
	if s := slope(xs, flat); math.Abs(s) > 1e-12 {
		t.Errorf("slope of a flat line %v, want 0", s)
	}
	if s := slope(xs, double); math.Abs(s-2) > 1e-12 {
		t.Errorf("slope %v, want 2", s)
	}
}

func TestParseRealRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-cvs", "0"}, {"-pairs", "0"}, {"-session-runs", "1"}, {"-workers", "0"}, {"-ttft-ms", "0"}, {"-sim-pairs", "-1"}, {"extra"}} {
		if _, err := parseReal(args); err == nil {
			t.Errorf("parseReal(%q) accepted", args)
		}
	}
	o, err := parseReal([]string{"-only", "no such setting"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.run(io.Discard); err == nil || !strings.Contains(err.Error(), "selects no setting") {
		t.Errorf("run with -only selecting nothing: %v, want an error saying so", err)
	}
}

// gate real draws the pairs gate families draws at its default CVs, whatever -cvs
// gate real is given, so that its rows sit beside the families table's.
func TestRealDrawsFamiliesPairs(t *testing.T) {
	fam, err := parseReal(nil)
	if err != nil {
		t.Fatal(err)
	}
	fam.fam.cvs, _ = parseCVs(famCVs)
	want := map[string]int{}
	for i, s := range fam.fam.settings() {
		want[s.name] = i
	}
	o, err := parseReal([]string{"-cvs", "0.05,0.4"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, s := range o.settings() {
		if i, ok := want[s.name]; ok && s.index != i {
			t.Errorf("%s: index %d, gate families numbers it %d", s.name, s.index, i)
		}
		if _, ok := want[s.name]; !ok && s.index < len(want) {
			t.Errorf("%s (a CV gate families does not run): index %d, inside gate families' numbers", s.name, s.index)
		}
		if other, dup := seen[s.index]; dup {
			t.Errorf("%s and %s share index %d", s.name, other, s.index)
		}
		seen[s.index] = s.name
		if s.sessions == 1 {
			t.Errorf("%s: a one-session row without -one-session", s.name)
		}
	}
	if len(seen) != 2+2*len(famList) {
		t.Errorf("%d settings, want the 2 slowdowns and %d families at 2 CVs", len(seen), len(famList))
	}
}
