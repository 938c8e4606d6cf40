package perftest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/run"
)

// Settings named in IgnoreWorkload may differ; the others still refuse the baseline.
// What answered (the mock's configuration) is not the workload: it is compared.
func TestRegressionIgnoreWorkload(t *testing.T) {
	cur := healthy.result("current")
	cur.Scenario.Concurrency = 8
	if c := Capture(t, func(t testing.TB) {
		cur.AssertNoRegressionWith(t, healthy.result("baseline"), Regression{IgnoreWorkload: []string{"concurrency"}})
	}); c.Failed() {
		t.Errorf("concurrency ignored, yet:\n%s", c.Text())
	}
	cur.Scenario.ISL = distribution.MustSpec("fixed:9")
	c := Capture(t, func(t testing.TB) {
		cur.AssertNoRegressionWith(t, healthy.result("baseline"), Regression{IgnoreWorkload: []string{"concurrency"}})
	})
	if !c.Failed() || !strings.HasPrefix(c.Text(), "perftest: regression gate: the baseline is another workload (isl differ)") {
		t.Errorf("another ISL passed or was misreported:\n%s", c.Text())
	}
	cur.Scenario.ISL = distribution.Spec{}
	cur.Scenario.Mock.TTFT = distribution.MustSpec("fixed:9")
	l := &logTB{}
	c = Capture(t, func(t testing.TB) {
		l.TB = t
		cur.AssertNoRegressionWith(l, healthy.result("baseline"), Regression{IgnoreWorkload: []string{"concurrency"}})
	})
	if c.Failed() || !strings.Contains(strings.Join(l.logs, "\n"), "target differs: mock.ttft_ms: baseline (unset), current fixed:9") {
		t.Errorf("another mock TTFT: want it compared, and shown beside the verdict:\n%s\n%s", c.Text(), strings.Join(l.logs, "\n"))
	}
}

// logTB records what is logged, and passes everything on.
type logTB struct {
	testing.TB
	logs []string
}

func (l *logTB) Logf(format string, args ...any) {
	l.logs = append(l.logs, fmt.Sprintf(format, args...))
	l.TB.Logf(format, args...)
}

// SaveBaseline keeps what Load needs and nothing else; the saved run is the same workload.
func TestSaveBaseline(t *testing.T) {
	sc := Scenario{
		Name: "base",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("fixed:8"),
				OSL:  distribution.MustSpec("fixed:2"),
				Seed: 4,
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 20,
			},
		},
	}
	res := Run(t, sc)
	dir := t.TempDir()
	SaveBaseline(t, res, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(run.BaselineFiles))
	if !slices.Equal(names, want) {
		t.Errorf("SaveBaseline wrote %v, want %v", names, want)
	}
	base := Load(t, dir)
	cs, err := base.Records()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := base.ServerRecords()
	if err != nil {
		t.Fatal(err)
	}
	if base.Interrupted || len(cs) != 20 || len(ss) != 20 {
		t.Errorf("Load(saved) = interrupted %v, %d client and %d server records; want a finished run of 20", base.Interrupted, len(cs), len(ss))
	}
	if c := Capture(t, func(t testing.TB) { Run(t, sc).AssertNoRegression(t, base, OSL) }); c.Failed() {
		t.Errorf("the same workload was refused:\n%s", c.Text())
	}
	sc.ISL = distribution.MustSpec("fixed:16")
	c := Capture(t, func(t testing.TB) { Run(t, sc).AssertNoRegression(t, base, OSL) })
	if !c.Failed() || !strings.Contains(c.Text(), "isl: baseline fixed:8, current fixed:16") {
		t.Errorf("another ISL: want the difference listed:\n%s", c.Text())
	}
	c = Capture(t, func(t testing.TB) { SaveBaseline(t, &Result{Outcome: &run.Outcome{}}, dir) })
	if !c.Stopped() || !strings.Contains(c.Text(), "perftest: scenario: save baseline: the run has no artifact directory") {
		t.Errorf("SaveBaseline of a run without artifacts: %s", c.Text())
	}
}
