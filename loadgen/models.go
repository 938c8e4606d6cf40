package loadgen

// Model mixes: one run spreads its requests over several models (several LoRA
// adapters of one server, or several models behind one router), each request's model
// chosen by [Target.ModelSelection] from its index, so the choice depends on nothing
// but the index and the seed: the same in every run, in every shard, at any
// concurrency.

import (
	"math"
	"slices"
	"strings"
)

// Model selection strategies ([Target.ModelSelection]).
const (
	// ModelRoundRobin gives request i the model ModelNames[i mod n] (AIPerf's
	// round_robin: "the nth prompt gets model n mod len(models)"). The default.
	ModelRoundRobin = "round_robin"
	// ModelRandom draws each request's model uniformly (AIPerf's random), from the
	// seed and the request's index.
	ModelRandom = "random"
	// ModelWeighted draws each request's model with the probabilities
	// ModelWeights[k] / sum(ModelWeights), from the seed and the request's index.
	ModelWeighted = "weighted"
)

// ModelSelections are the values [Target.ModelSelection] takes.
var ModelSelections = []string{ModelRoundRobin, ModelRandom, ModelWeighted}

// RunModels returns the models the run's requests go to: ModelNames, else Model,
// else none (nil: the server's or DefaultModel).
func (t *Target) RunModels() []string {
	if len(t.ModelNames) > 0 {
		return t.ModelNames
	}
	if t.Model != "" {
		return []string{t.Model}
	}
	return nil
}

// ModelRequests returns how many of n requests the model mix sends to model m, as
// its selection strategy expects them: round robin's exact count, random's and
// weighted's expected one (rounded down); 0 for a model not in ModelNames.
func (t *Target) ModelRequests(m string, n int) int {
	k := slices.Index(t.ModelNames, m)
	if k < 0 {
		return 0
	}
	switch t.ModelSelection {
	case ModelRandom:
		return n / len(t.ModelNames)
	case ModelWeighted:
		sum := 0.0
		for _, w := range t.ModelWeights {
			sum += w
		}
		if k >= len(t.ModelWeights) || sum <= 0 {
			return 0
		}
		return int(float64(n) * t.ModelWeights[k] / sum)
	}
	c := n / len(t.ModelNames)
	if k < n%len(t.ModelNames) {
		c++
	}
	return c
}

// checkModels checks the model mix: names, strategy and weights, each problem naming
// the field.
func (c *Config) checkModels(p *problems) {
	p.checkEnum("model_selection_strategy", c.ModelSelection, ModelSelections)
	if c.Model != "" && len(c.ModelNames) > 0 {
		p.add("model %q and model_names %s: give the model one way (one name in model_names is the same as model)", c.Model, strings.Join(c.ModelNames, ","))
	}
	seen := map[string]bool{}
	for i, m := range c.ModelNames {
		switch {
		case strings.TrimSpace(m) == "":
			p.add("model_names[%d] is empty", i)
		case seen[m]:
			p.add("model_names: %q is listed twice (give it a larger weight instead)", m)
		}
		seen[m] = true
	}
	if c.ModelSelection != "" && c.ModelSelection != ModelRoundRobin && len(c.ModelNames) == 0 {
		p.add("model_selection_strategy %q needs model_names", c.ModelSelection)
	}
	switch {
	case c.ModelSelection == ModelWeighted && len(c.ModelWeights) != len(c.ModelNames):
		p.add("model_weights: %d weights for %d model_names; want one weight per model, in order", len(c.ModelWeights), len(c.ModelNames))
	case c.ModelSelection != ModelWeighted && len(c.ModelWeights) > 0:
		p.add("model_weights need model_selection_strategy %q", ModelWeighted)
	case len(c.ModelWeights) > 0:
		sum := 0.0
		for i, w := range c.ModelWeights {
			if !(w >= 0) || math.IsInf(w, 0) {
				p.add("model_weights[%d] = %v: want a finite weight >= 0", i, w)
				return
			}
			sum += w
		}
		if sum <= 0 {
			p.add("model_weights: all zero; want at least one weight > 0")
		}
	}
}

// modelPicker chooses each request's model from its index.
type modelPicker struct {
	names []string
	cum   []float64 // cumulative probabilities (random, weighted); nil = round robin
	seed  uint64
}

func newModelPicker(t *Target, seed uint64) *modelPicker {
	if len(t.ModelNames) == 0 {
		return nil
	}
	mp := &modelPicker{names: t.ModelNames, seed: seed}
	switch t.ModelSelection {
	case ModelRandom:
		mp.cum = make([]float64, len(t.ModelNames))
		for i := range mp.cum {
			mp.cum[i] = float64(i+1) / float64(len(mp.cum))
		}
	case ModelWeighted:
		sum := 0.0
		for _, w := range t.ModelWeights {
			sum += w
		}
		mp.cum = make([]float64, len(t.ModelWeights))
		acc := 0.0
		for i, w := range t.ModelWeights {
			acc += w
			mp.cum[i] = acc / sum
		}
	}
	return mp
}

// pick returns request idx's model.
func (mp *modelPicker) pick(idx int) string {
	if mp.cum == nil {
		return mp.names[idx%len(mp.names)]
	}
	u := unitHash(mp.seed, uint64(idx))
	for i, c := range mp.cum {
		if u < c {
			return mp.names[i]
		}
	}
	return mp.names[len(mp.names)-1] // rounding: u just below 1
}

// unitHash maps (seed, i) to a uniform number in [0, 1): SplitMix64's finaliser over
// the pair, so each request's draw is independent of every other's and of the order
// requests are sent in.
func unitHash(seed, i uint64) float64 {
	x := seed ^ 0x6d6f64656c6d6978 // "modelmix": independent of the other seeded streams
	x += (i + 1) * 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
