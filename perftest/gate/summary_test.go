package gate

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/reportgen"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// A regressed gate's markdown summary, pinned by a golden file: the console's mark
// and headline, where each side ran and the margin, one row per statistic with each
// side's geometric mean, the change, the interval and the verdict (a failing gating
// one says so; a reported-only one is marked), and links to the files on disk.
func TestGateSummaryGolden(t *testing.T) {
	sc := Workload{Settings: [][2]string{{"isl", "normal:128,20"}}, Target: [][2]string{{"urls", "http://127.0.0.1:18030"}}}
	extra := func(f float64) map[string][]float64 { return map[string][]float64{"ttft_p99": scale(noise5, f)} }
	base, cur := series(sc, noise5, extra(0.2)), series(sc, scale(noise5, 1.2), extra(0.2))
	dir := t.TempDir()
	base.Dir, cur.Dir = filepath.Join(dir, "base"), filepath.Join(dir, "cur")
	for _, p := range []string{filepath.Join(cur.Dir, reportgen.GateReportFile), filepath.Join(cur.Dir, RunsFile)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Compare(base, cur, Gate{}, 0)
	s := r.Summary()
	if s.Mark != "FAIL" || s.Headline != r.Headline() {
		t.Errorf("summary mark %q, headline %q; want FAIL and the console's headline %q", s.Mark, s.Headline, r.Headline())
	}
	// The links are relative to where the summary is read.
	var b strings.Builder
	if err := reportgen.WriteSummary(&b, s.Relative(dir)); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(b.String(), dir, "DIR")
	testutil.Golden(t, filepath.Join("testdata", "summary.md"), []byte(got), *updateGolden)
	// The baseline's runs.json is not on disk: no link to it.
	if strings.Contains(got, "baseline runs") {
		t.Errorf("summary links a file that is not on disk:\n%s", got)
	}
}

// Each answer has its mark, as the console prints it: a pass, an inconclusive gate,
// and a refused baseline (another workload: INVALID, nothing compared, no table).
func TestGateSummaryMarks(t *testing.T) {
	sc := Workload{Settings: [][2]string{{"isl", "normal:128,20"}}}
	other := Workload{Settings: [][2]string{{"isl", "normal:256,20"}}}
	base := series(sc, noise5, nil)
	for _, c := range []struct {
		name string
		cur  *Series
		mark string
		rows int
	}{
		{"same", series(sc, []float64{1.002, 0.998, 1.007, 0.993, 1.0}, nil), "PASS", 4},
		{"4% slower", series(sc, []float64{1.04, 1.06, 1.02, 1.05, 1.03}, nil), "INCONCLUSIVE", 4},
		{"another workload", series(other, noise5, nil), "INVALID", 0},
	} {
		r := Compare(base, c.cur, Gate{}, 0)
		s := r.Summary()
		if s.Mark != c.mark || len(s.Stats) != c.rows || s.Headline != r.Headline() {
			t.Errorf("%s: mark %q, %d rows, headline %q; want %q, %d rows, the console's headline", c.name, s.Mark, len(s.Stats), s.Headline, c.mark, c.rows)
		}
	}
}
