package main

import (
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
