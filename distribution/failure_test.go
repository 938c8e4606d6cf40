package distribution

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// TestFailureMessages shows the failure path: samples that clearly do not fit, and the
// messages the results print. The text is pinned in testdata/failure.golden
// (go test -run TestFailureMessages -update rewrites it).
func TestFailureMessages(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	check := func(name string, rejected bool, msg string) {
		t.Helper()
		if !rejected {
			t.Errorf("%s: not rejected at alpha=0.01: %s", name, msg)
		}
		b.WriteString(name + ":\n    " + msg + "\n")
	}

	// Inter-arrival gaps that are bursty (gamma, shape 0.3) tested against Poisson.
	gaps := draws(Gamma{Shape: 0.3, Rate: 6}, r, 1200)
	ks := KS1(gaps, Exponential{Rate: 20})
	check("gaps vs exponential (KS1)", ks.Reject(0.01), ks.String())

	ad := AndersonDarling(gaps, Exponential{Rate: 20})
	check("gaps vs exponential (Anderson-Darling)", ad.Reject(0.01), ad.String())

	// Prompt lengths generated 10% too long.
	want := Length{Dist: Normal{Mu: 512, Sigma: 64}, Max: 1024}
	got := lengths(Length{Dist: Normal{Mu: 563, Sigma: 64}, Max: 1024}, r, 800)
	fit := FitLength(got, want)
	check("lengths 10% long (FitLength)", fit.Reject(0.01), fit.String())
	fit = FitLengthChiSquare(got, want)
	check("lengths 10% long (FitLengthChiSquare)", fit.Reject(0.01), fit.String())

	// Lengths the target cannot produce (above Max).
	got[17], got[300] = 1500, 2048
	fit = FitLength(got, want)
	check("lengths above max (FitLength)", fit.Reject(0.01), fit.String())

	// A run 15% slower than its baseline.
	base := draws(LogNormalFromMeanStd(0.2, 0.05), r, 500)
	run := draws(LogNormalFromMeanStd(0.23, 0.05), r, 500)
	ks2 := KS2(base, run)
	check("latency shift (KS2)", ks2.Reject(0.01), ks2.String())
	mw := MannWhitney(base, run)
	check("latency shift (MannWhitney)", mw.Reject(0.01), mw.String())
	adk := AndersonDarlingKSamp(base, run)
	check("latency shift (AndersonDarlingKSamp)", adk.Reject(0.01), adk.String())

	// Goodput: 870 of 1000 requests met the SLO; the interval excludes the 95% target.
	iv := WilsonInterval(870, 1000, 0.99)
	check("goodput below 95% (Wilson)", !iv.Contains(0.95), iv.String())

	golden(t, "testdata/failure.golden", b.String())
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	testutil.Golden(t, path, []byte(got), *update)
}
