package run

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/gate"
)

// TestSeries: RunSeries writes K runs of one seeded workload with their statistics and
// runs.json; LoadSeries reads it back, an older run-NNN directory without runs.json,
// and a one-run directory; Extend numbers the next runs after the last.
func TestSeries(t *testing.T) {
	dir := t.TempDir()
	s, outs, err := RunSeries(context.Background(), sweepScenario(), 2, dir, SeriesOptions{CacheBust: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || len(outs) != 2 || s.Runs[1].Run != 2 || s.Runs[0].Seed != 5 || s.Runs[1].Seed != 5 {
		t.Fatalf("RunSeries = %+v; want 2 runs of seed 5", s.Runs)
	}
	if !s.Runs[0].CacheBust || !s.Runs[1].CacheBust {
		t.Errorf("runs %+v: want each run cache-busted", s.Runs)
	}
	if o := mustLoad(t, filepath.Join(dir, "run-002")); !o.Scenario.Validity.CacheBust {
		t.Errorf("run 2's scenario.json has no validity.cache_bust")
	}
	if _, err := Extend(context.Background(), s, sweepScenario(), 1, SeriesOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSeries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != 3 || back.Dirs[2] != "run-003" || backSeed(t, back) != 5 || back.Runs[2].Stats["ttft_p50"] != s.Runs[2].Stats["ttft_p50"] {
		t.Errorf("LoadSeries after Extend = %d runs %v; want run-003 with the stats Extend computed", back.Len(), back.Dirs)
	}
	// The series is described (the gate compares its workload), and runs.json read and
	// written again is the same bytes.
	if back.Workload == nil || fmt.Sprint(back.Workload.Settings) != fmt.Sprint(sweepScenario().Workload()) {
		t.Errorf("LoadSeries: workload %+v; want sweepScenario's settings", back.Workload)
	}
	before, err := os.ReadFile(filepath.Join(dir, gate.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := back.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, gate.RunsFile)); !bytes.Equal(before, after) || !bytes.Contains(before, []byte("\n  \"scenario\": {\n    \"")) {
		t.Errorf("runs.json read and written again differs, or is not indented:\n%s\n%s", before, after)
	}
	xs, missing := back.Values("ttft_p50")
	if len(xs) != 3 || missing != 0 {
		t.Errorf("Values(ttft_p50) = %v, %d missing", xs, missing)
	}
	if cv := back.CV("ttft_p50"); math.IsNaN(cv) || cv < 0 {
		t.Errorf("CV = %v, want a number >= 0", cv)
	}
	// Without runs.json: the run-NNN directories, statistics from runstats.json.
	if err := os.Remove(filepath.Join(dir, gate.RunsFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "run-001", RunStatsFile)); err != nil { // and from the records
		t.Fatal(err)
	}
	old, err := LoadSeries(dir)
	if err != nil || old.Len() != 3 || old.Runs[0].Stats["itl_p90"] != s.Runs[0].Stats["itl_p90"] {
		t.Errorf("LoadSeries without runs.json = %v, %v; want the 3 runs and their stats", old, err)
	}
	one, err := LoadSeries(filepath.Join(dir, "run-002"))
	if err != nil || one.Len() != 1 || one.Dirs[0] != "." {
		t.Errorf("LoadSeries(one run) = %v, %v; want a series of 1", one, err)
	}
	// SaveSeries copies what a baseline needs.
	saved := t.TempDir()
	files, _, err := SaveSeries(saved, outs...)
	if err != nil || len(files) < 2*3+1 {
		t.Fatalf("SaveSeries = %v, %v", files, err)
	}
	if b, err := LoadSeries(saved); err != nil || b.Len() != 2 {
		t.Errorf("LoadSeries(saved) = %v, %v; want 2 runs", b, err)
	}
	if _, err := LoadSeries(t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no runs") {
		t.Errorf("LoadSeries(empty) = %v, want 'holds no runs'", err)
	}
	if _, _, err := RunSeries(context.Background(), sweepScenario(), 0, dir, SeriesOptions{}); err == nil {
		t.Error("RunSeries(0 runs): want an error")
	}
}

func backSeed(t *testing.T, s *gate.Series) uint64 {
	t.Helper()
	sc, err := SeriesScenario(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc.Seed
}

func mustLoad(t *testing.T, dir string) *Outcome {
	t.Helper()
	o, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
