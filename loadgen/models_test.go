package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestModelMixRoundRobin: with round robin, request i goes to model i mod n, in the
// body the server received and in the record, whatever the concurrency.
func TestModelMixRoundRobin(t *testing.T) {
	g := newGroundTruth(t)
	names := []string{"lora-a", "lora-b", "lora-c"}
	out, bodies := runOK(t, g, Config{
		Target: Target{URLs: []string{g.URL}, ModelNames: names},
		Load:   Load{Concurrency: 4},
		Stop:   Stop{Requests: 30},
	})
	if len(out.Records) != 30 {
		t.Fatalf("%d records; want 30", len(out.Records))
	}
	for _, r := range out.Records {
		want := names[r.Index%3]
		if r.Model != want {
			t.Errorf("record %d: model %q; want %q", r.Index, r.Model, want)
		}
		if got := modelOf(bodies[r.RequestID]); got != want {
			t.Errorf("request %d sent model %q; want %q", r.Index, got, want)
		}
	}
}

// chiSquareP is the p-value of Pearson's goodness-of-fit test of counts against the
// probabilities p.
func chiSquareP(counts []int, p []float64) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	x2 := 0.0
	for i, c := range counts {
		e := float64(n) * p[i]
		x2 += (float64(c) - e) * (float64(c) - e) / e
	}
	return distuv.ChiSquared{K: float64(len(counts) - 1)}.Survival(x2)
}

// TestModelMixProportions: random and weighted picks fit their probabilities
// (Pearson's chi-square, alpha = 0.001, n = 20,000, seed 7), and the same test
// rejects the proportions of the other strategy, so it can fail.
func TestModelMixProportions(t *testing.T) {
	const n, alpha = 20000, 0.001
	names := []string{"a", "b", "c"}
	draw := func(tg Target, seed uint64) []int {
		mp := newModelPicker(&tg, seed)
		counts := make([]int, len(names))
		for i := range n {
			m := mp.pick(i)
			counts[strings.Index("abc", m)]++
		}
		return counts
	}
	uniform := []float64{1. / 3, 1. / 3, 1. / 3}
	weighted := []float64{0.6, 0.3, 0.1}
	random := draw(Target{ModelNames: names, ModelSelection: ModelRandom}, 7)
	heavy := draw(Target{ModelNames: names, ModelSelection: ModelWeighted, ModelWeights: []float64{6, 3, 1}}, 7)
	for _, c := range []struct {
		name   string
		counts []int
		p      []float64
		fits   bool
	}{
		{"random vs uniform", random, uniform, true},
		{"weighted 6,3,1 vs 0.6,0.3,0.1", heavy, weighted, true},
		{"random vs 0.6,0.3,0.1", random, weighted, false},
		{"weighted 6,3,1 vs uniform", heavy, uniform, false},
	} {
		p := chiSquareP(c.counts, c.p)
		if (p >= alpha) != c.fits {
			t.Errorf("%s: counts %v, chi-square p = %.3g at alpha %g; want fit = %v", c.name, c.counts, p, alpha, c.fits)
		}
	}
	// The draw depends on the seed and the index only.
	if again := draw(Target{ModelNames: names, ModelSelection: ModelRandom}, 7); fmt.Sprint(again) != fmt.Sprint(random) {
		t.Errorf("same seed drew %v, then %v", random, again)
	}
	if other := draw(Target{ModelNames: names, ModelSelection: ModelRandom}, 8); fmt.Sprint(other) == fmt.Sprint(random) {
		t.Errorf("seeds 7 and 8 drew the same counts %v", other)
	}
	// A zero weight is never drawn.
	if c := draw(Target{ModelNames: names, ModelSelection: ModelWeighted, ModelWeights: []float64{1, 0, 1}}, 7); c[1] != 0 {
		t.Errorf("weight 0 drawn %d times", c[1])
	}
}

// TestModelMixInvalid: each bad model mix is refused before anything is sent, with an
// error naming the field.
func TestModelMixInvalid(t *testing.T) {
	base := func(tg Target) Config {
		tg.URLs = []string{"http://127.0.0.1:8000"}
		return Config{Target: tg, Stop: Stop{Requests: 1}}
	}
	for _, c := range []struct {
		tg   Target
		want string
	}{
		{Target{ModelNames: []string{"a", "b"}, ModelSelection: "fastest"}, `model_selection_strategy "fastest": want round_robin, random or weighted`},
		{Target{ModelNames: []string{"a", "b"}, ModelSelection: ModelWeighted, ModelWeights: []float64{1}}, "model_weights: 1 weights for 2 model_names"},
		{Target{ModelNames: []string{"a", "b"}, ModelSelection: ModelWeighted}, "model_weights: 0 weights for 2 model_names"},
		{Target{ModelNames: []string{"a", "b"}, ModelSelection: ModelWeighted, ModelWeights: []float64{1, -1}}, "model_weights[1] = -1"},
		{Target{ModelNames: []string{"a", "b"}, ModelSelection: ModelWeighted, ModelWeights: []float64{0, 0}}, "model_weights: all zero"},
		{Target{ModelNames: []string{"a", "b"}, ModelWeights: []float64{1, 2}}, `model_weights need model_selection_strategy "weighted"`},
		{Target{Model: "m", ModelNames: []string{"a", "b"}}, `model "m" and model_names a,b`},
		{Target{ModelNames: []string{"a", "a"}}, `model_names: "a" is listed twice`},
		{Target{ModelNames: []string{"a", " "}}, "model_names[1] is empty"},
		{Target{ModelSelection: ModelRandom}, `model_selection_strategy "random" needs model_names`},
	} {
		cfg := base(c.tg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: Validate() = %v; want an invalid-config error containing %q", c.tg, err, c.want)
		}
	}
	ok := base(Target{ModelNames: []string{"a", "b"}, ModelSelection: ModelWeighted, ModelWeights: []float64{3, 1}})
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid weighted mix: %v", err)
	}
}

// ModelRequests is what a model mix sends each model: round robin's count is the
// picker's exactly, random's and weighted's within a few standard deviations of it.
func TestModelRequests(t *testing.T) {
	const n = 10_000
	for _, tg := range []Target{
		{ModelNames: []string{"a", "b", "c"}},
		{ModelNames: []string{"a", "b", "c"}, ModelSelection: ModelRandom},
		{ModelNames: []string{"a", "b", "c"}, ModelSelection: ModelWeighted, ModelWeights: []float64{1, 3, 6}},
	} {
		mp := newModelPicker(&tg, 7)
		got := map[string]int{}
		for i := range n {
			got[mp.pick(i)]++
		}
		for _, m := range tg.ModelNames {
			want := tg.ModelRequests(m, n)
			sd := math.Sqrt(float64(want))
			if tg.ModelSelection == "" && got[m] != want || math.Abs(float64(got[m]-want)) > 4*sd+1 {
				t.Errorf("%s: model %s: picked %d of %d, ModelRequests says %d", cmp.Or(tg.ModelSelection, ModelRoundRobin), m, got[m], n, want)
			}
		}
		if k := tg.ModelRequests("z", n); k != 0 {
			t.Errorf("a model not in the mix: %d requests, want 0", k)
		}
	}
	if got := (&Target{ModelNames: []string{"a", "b", "c"}}).ModelRequests("a", 10); got != 4 {
		t.Errorf("round robin, 10 requests over 3 models: %d to the first, want 4", got)
	}
}
