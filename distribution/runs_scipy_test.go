package distribution

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"testing"

	"github.com/perfgate/perfgate/distribution/nprand"
	"github.com/perfgate/perfgate/internal/testutil"
)

// runsRef is the output of testdata/gen_runs.py, run live against SciPy/numpy.
type runsRef struct {
	Numpy, Scipy string
	Welch        []struct {
		X, Y                             []float64
		Conf, Diff, SE, DF, T, P, Lo, Hi float64
	}
	TQ      []struct{ P, DF, Q float64 }
	NormalQ []struct{ P, Q float64 } `json:"normal_q"`
	Holm    []struct{ P, Adj []float64 }
	Clopper []struct {
		K, N         int
		Conf, Lo, Hi float64
	}
	Power      []struct{ Lam, DF, Alpha, Power float64 }
	Detectable []struct{ SE, DF, Alpha, Power, D float64 }
	RunsFor    []struct {
		Sigma, Effect, Alpha, Power float64
		N                           int
	} `json:"runs_for"`
	HierBoot []struct {
		Seed              uint64
		Base, Cur         [][]float64
		Block, Resamples  int
		Conf, Lo, Hi, Est float64 `json:"-"`
		Estimate          float64
	}
}

func loadRunsRef(t *testing.T) runsRef {
	t.Helper()
	py := testutil.Python(t, "scipy", "numpy")
	out, err := exec.Command(py, "testdata/gen_runs.py").Output()
	if err != nil {
		t.Fatalf("testdata/gen_runs.py: %v", err)
	}
	var r runsRef
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("testdata/gen_runs.py output: %v", err)
	}
	// The bootstrap's bounds come under their own names.
	var raw struct {
		HierBoot []struct{ Conf, Lo, Hi float64 } `json:"hierboot"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	for i := range r.HierBoot {
		r.HierBoot[i].Conf, r.HierBoot[i].Lo, r.HierBoot[i].Hi = raw.HierBoot[i].Conf, raw.HierBoot[i].Lo, raw.HierBoot[i].Hi
	}
	return r
}

// near reports whether got is within 1e-9 of want, relatively (absolutely below 1e-12).
func near(got, want float64) bool { return closeTo(got, want, exactRel, 1e-12) }

func TestScipyRuns(t *testing.T) {
	t.Parallel()
	ref := loadRunsRef(t)
	t.Logf("SciPy %s, numpy %s", ref.Scipy, ref.Numpy)
	t.Run("welch", func(t *testing.T) {
		for i, c := range ref.Welch {
			r, err := Welch(c.X, c.Y, c.Conf)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"diff", r.Diff, c.Diff}, {"se", r.SE, c.SE}, {"df", r.DF, c.DF}, {"t", r.T, c.T}, {"p", r.PValue, c.P}, {"lo", r.Lo, c.Lo}, {"hi", r.Hi, c.Hi}} {
				if !near(f.got, f.want) {
					t.Errorf("case %d (n=%d+%d, conf %v): %s = %v, want %v (scipy)", i, len(c.X), len(c.Y), c.Conf, f.name, f.got, f.want)
				}
			}
		}
	})
	t.Run("t quantile", func(t *testing.T) {
		for _, c := range ref.TQ {
			if got := TQuantile(c.P, c.DF); !near(got, c.Q) {
				t.Errorf("TQuantile(%v, %v) = %v, want %v (scipy t.ppf)", c.P, c.DF, got, c.Q)
			}
		}
		for _, c := range ref.NormalQ {
			if got := TQuantile(c.P, math.Inf(1)); !near(got, c.Q) {
				t.Errorf("TQuantile(%v, +Inf) = %v, want %v (scipy norm.ppf)", c.P, got, c.Q)
			}
		}
	})
	t.Run("holm", func(t *testing.T) {
		for _, c := range ref.Holm {
			got := Holm(c.P)
			for i := range got {
				if !near(got[i], c.Adj[i]) {
					t.Errorf("Holm(%v) = %v, want %v (numpy)", c.P, got, c.Adj)
					break
				}
			}
			// HolmLevels rejects exactly where the adjusted p-value is below alpha.
			for _, alpha := range []float64{0.01, 0.05, 0.2} {
				lv := HolmLevels(c.P, alpha)
				for i := range lv {
					if (c.P[i] < lv[i]) != (c.Adj[i] < alpha) {
						t.Errorf("HolmLevels(%v, %v)[%d] = %v disagrees with the adjusted p %v", c.P, alpha, i, lv[i], c.Adj[i])
					}
				}
			}
		}
	})
	t.Run("clopper-pearson", func(t *testing.T) {
		for _, c := range ref.Clopper {
			iv := ClopperPearson(c.K, c.N, c.Conf)
			if !near(iv.Lo, c.Lo) || !near(iv.Hi, c.Hi) {
				t.Errorf("ClopperPearson(%d, %d, %v) = [%v, %v], want [%v, %v] (scipy binomtest exact)", c.K, c.N, c.Conf, iv.Lo, iv.Hi, c.Lo, c.Hi)
			}
		}
	})
	t.Run("detectable effect", func(t *testing.T) {
		inf := func(df float64) float64 { // the script writes +Inf as -1
			if df < 0 {
				return math.Inf(1)
			}
			return df
		}
		for _, c := range ref.Power {
			if got := TTestPower(c.Lam, inf(c.DF), c.Alpha); !near(got, c.Power) {
				t.Errorf("TTestPower(%v, %v, %v) = %v, want %v (scipy nct)", c.Lam, inf(c.DF), c.Alpha, got, c.Power)
			}
		}
		for _, c := range ref.Detectable {
			if got := DetectableEffect(c.SE, inf(c.DF), c.Alpha, c.Power); !near(got, c.D) {
				t.Errorf("DetectableEffect(%v, %v, %v, %v) = %v, want %v (scipy nct, brentq)", c.SE, inf(c.DF), c.Alpha, c.Power, got, c.D)
			}
		}
		for _, c := range ref.RunsFor {
			if got := RunsForEffect(c.Sigma, c.Effect, c.Alpha, c.Power, 1000); got != c.N {
				t.Errorf("RunsForEffect(%v, %v, %v, %v) = %d, want %d", c.Sigma, c.Effect, c.Alpha, c.Power, got, c.N)
			}
		}
	})
	t.Run("hierarchical bootstrap", func(t *testing.T) {
		for _, c := range ref.HierBoot {
			g := nprand.NewPCG64(c.Seed)
			iv, err := hierBootstrap(c.Base, c.Cur, HierarchicalBootstrap{Block: c.Block, Resamples: c.Resamples, Confidence: c.Conf}, g.Float64)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("seed %d, %d+%d runs, block %d", c.Seed, len(c.Base), len(c.Cur), c.Block)
			if !near(iv.Lo, c.Lo) || !near(iv.Hi, c.Hi) || !near(iv.Estimate, c.Estimate) {
				t.Errorf("%s: %v [%v, %v], want %v [%v, %v] (numpy, same uniforms)", name, iv.Estimate, iv.Lo, iv.Hi, c.Estimate, c.Lo, c.Hi)
			}
		}
	})
}
