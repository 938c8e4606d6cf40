package main

// The model-mix flags of profile (docs/models.md): several --model-names, AIPerf's
// --model-selection-strategy and perfgate's --model-weights.

import (
	"flag"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// mixFlags are the raw model-mix flag values.
type mixFlags struct {
	selection, weights string
}

func registerMixFlags(fs *flag.FlagSet, m *mixFlags) {
	fs.StringVar(&m.selection, "model-selection-strategy", "", "[target] with several --model-names, how each request's model is chosen: "+loadgen.OrList(loadgen.ModelSelections)+" (default round_robin: request i gets model i mod n)")
	fs.StringVar(&m.weights, "model-weights", "", "[target] with --model-selection-strategy weighted, one relative weight per --model-names entry, in order (e.g. 3,1)")
}

// profileModels maps --model-names (one name: the model; several: a model mix),
// --model-selection-strategy and --model-weights.
func profileModels(sc *scenario.Scenario, f *profileFlags, _ *profileOpts, _ func(...string) bool) error {
	if f.models != "" {
		var names []string
		for _, m := range strings.Split(f.models, ",") {
			if m = strings.TrimSpace(m); m == "" {
				return invalidf("--model-names %q: an empty name", f.models)
			}
			names = append(names, m)
		}
		sc.Model, sc.ModelNames = "", nil
		if len(names) == 1 {
			sc.Model = names[0]
		} else {
			sc.ModelNames = names
		}
	}
	m := &f.mix
	if m.selection != "" {
		if !slices.Contains(loadgen.ModelSelections, m.selection) {
			return invalidf("--model-selection-strategy %q: want %s", m.selection, loadgen.OrList(loadgen.ModelSelections))
		}
		sc.ModelSelection = m.selection
	}
	if m.weights != "" {
		sc.ModelWeights = nil
		for _, w := range strings.Split(m.weights, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return invalidf("--model-weights %q: %q is not a weight (want numbers >= 0, e.g. 3,1)", m.weights, w)
			}
			sc.ModelWeights = append(sc.ModelWeights, v)
		}
		if sc.ModelSelection == "" {
			sc.ModelSelection = loadgen.ModelWeighted // weights say how to choose
		}
	}
	return nil
}
