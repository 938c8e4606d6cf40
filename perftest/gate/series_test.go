package gate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
