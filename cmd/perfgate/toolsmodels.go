package main

// The model-mix flags of profile (docs/models.md): several --model-names, AIPerf's
// --model-selection-strategy and perfgate's --model-weights; and the tool-call flags
// (docs/tools.md): --tools, --tools-file, --tool-choice and --tool-results.

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
	tools              int
	toolsFile          string
	toolChoice         string
	toolResults        bool
}

func registerMixFlags(fs *flag.FlagSet, m *mixFlags) {
	fs.StringVar(&m.selection, "model-selection-strategy", "", "[target] with several --model-names, how each request's model is chosen: "+loadgen.OrList(loadgen.ModelSelections)+" (default round_robin: request i gets model i mod n)")
	fs.IntVar(&m.tools, "tools", 0, "[workload] send this many synthetic function definitions as \"tools\" with each chat request")
	fs.StringVar(&m.toolsFile, "tools-file", "", "[workload] send the JSON array of tools in this file with each chat request")
	fs.StringVar(&m.toolChoice, "tool-choice", "", "[workload] tool_choice drawn per request: auto (default), required, none, function (one tool by name), or weights such as auto:0.6,required:0.2,none:0.1,function:0.1")
	fs.BoolVar(&m.toolResults, "tool-results", false, "[workload] multi-turn: after an answer with tool calls, the next turn sends the calls back and its prompt as their result (a tool message)")
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
	if m.tools != 0 {
		sc.Tools = m.tools
	}
	if m.toolsFile != "" {
		sc.ToolsFile = m.toolsFile
	}
	if m.toolChoice != "" {
		sc.ToolChoice = m.toolChoice
	}
	if m.toolResults {
		sc.ToolResults = true
	}
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
