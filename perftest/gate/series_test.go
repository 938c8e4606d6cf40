package scenario

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if _, err := s.Extend(context.Background(), sweepScenario(), 1, SeriesOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSeries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != 3 || back.Dirs[2] != "run-003" || back.Scenario.Seed != 5 || back.Runs[2].Stats["ttft_p50"] != s.Runs[2].Stats["ttft_p50"] {
		t.Errorf("LoadSeries after Extend = %d runs %v; want run-003 with the stats Extend computed", back.Len(), back.Dirs)
	}
	xs, missing := back.Values("ttft_p50")
	if len(xs) != 3 || missing != 0 {
		t.Errorf("Values(ttft_p50) = %v, %d missing", xs, missing)
	}
	if cv := back.CV("ttft_p50"); math.IsNaN(cv) || cv < 0 {
		t.Errorf("CV = %v, want a number >= 0", cv)
	}
	// Without runs.json: the run-NNN directories, statistics from runstats.json.
	if err := os.Remove(filepath.Join(dir, RunsFile)); err != nil {
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

func mustLoad(t *testing.T, dir string) *Outcome {
	t.Helper()
	o, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A statistic read from runs.json or runstats.json that no run can have (negative,
// past MaxRunStat, a fraction over 1) is an error naming the file and the field, not
// a number the gate or a history computes with: a mean of two runs of 1e308 is +Inf.
func TestLoadSeriesRefusesIllegalStats(t *testing.T) {
	for _, c := range []struct {
		stats string
		want  string // after "runs.json: "
	}{
		{`{"ttft_p50": -0.5}`, `runs[1].stats.ttft_p50: -0.5: want a number >= 0`},
		{`{"output_tps": 1e308}`, `runs[1].stats.output_tps: 1e+308: want at most 1e+12`},
		{`{"goodput_fraction": 1.5}`, `runs[1].stats.goodput_fraction: 1.5: want a fraction from 0 to 1`},
		{`{"my_stat": -1}`, `runs[1].stats.my_stat: -1: want a number >= 0`},
	} {
		dir := t.TempDir()
		idx := `{"scenario":{"name":"x"},"runs":[{"run":1,"stats":{"ttft_p50":0.1}},{"run":2,"stats":` + c.stats + `}],"dirs":["run-001","run-002"]}`
		os.WriteFile(filepath.Join(dir, RunsFile), []byte(idx), 0o644)
		want := filepath.Join(dir, RunsFile) + ": " + c.want
		if _, err := LoadSeries(dir); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("LoadSeries(stats %s) = %v\nwant an error ending %s", c.stats, err, want)
		}
		run := filepath.Join(dir, "run-001")
		os.Mkdir(run, 0o755)
		os.WriteFile(filepath.Join(run, RunStatsFile), []byte(`{"run":1,"stats":`+c.stats+`}`), 0o644)
		want = filepath.Join(run, RunStatsFile) + ": " + strings.TrimPrefix(c.want, "runs[1].")
		if _, err := ReadRunStats(run); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("ReadRunStats(stats %s) = %v\nwant an error ending %s", c.stats, err, want)
		}
	}
	// The bounds themselves are legal.
	for _, c := range []struct {
		name string
		v    float64
	}{{"ttft_p50", 0}, {"output_tps", MaxRunStat}, {"goodput_fraction", 1}, {"my_stat", 3}} {
		if err := CheckRunStat(c.name, c.v); err != nil {
			t.Errorf("CheckRunStat(%s, %v) = %v, want nil", c.name, c.v, err)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1e-9, math.Nextafter(MaxRunStat, math.Inf(1))} {
		if err := CheckRunStat("ttft_p50", v); err == nil {
			t.Errorf("CheckRunStat(ttft_p50, %v) = nil, want an error", v)
		}
	}
}
