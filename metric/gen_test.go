package metric

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the files generated from the catalogue")

// The files generated from the catalogue, relative to this package.
var generated = []struct {
	path string
	gen  func([]Def) []byte
}{
	{"../record/names.go", genRecordNames},
	{"../perftest/check/metrics.go", genCheckConsts},
	{"../perftest/metrics.go", genPerftestConsts},
	{"../docs/metrics.md", genDoc},
}

// TestMetricsDocCurrent fails when a file generated from the catalogue (the record's
// metric names, check's and perftest's metric constants, docs/metrics.md) is stale.
// Regenerate with `go test ./metric -run TestMetricsDocCurrent -update`.
func TestMetricsDocCurrent(t *testing.T) {
	for _, g := range generated {
		want := g.gen(builtin)
		if *update {
			if err := os.MkdirAll(filepath.Dir(g.path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(g.path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(g.path)
		if err != nil {
			t.Fatalf("%v (generate it: go test ./metric -run TestMetricsDocCurrent -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: the catalogue changed; regenerate it with go test ./metric -run TestMetricsDocCurrent -update", g.path)
		}
	}
}

// TestStaleDocFails: the comparison above notices a catalogue change.
func TestStaleDocFails(t *testing.T) {
	changed := append([]Def(nil), builtin...)
	changed[0].Help = "something else"
	for _, g := range generated {
		if g.path == "../perftest/metrics.go" {
			continue // names only
		}
		if bytes.Equal(g.gen(builtin), g.gen(changed)) {
			t.Errorf("%s does not change when a metric's help does", g.path)
		}
	}
}

const genHeader = "// Code generated from package metric's catalogue by `go test ./metric -run TestMetricsDocCurrent -update`. DO NOT EDIT.\n\n"

func gofmt(b *bytes.Buffer) []byte {
	out, err := format.Source(b.Bytes())
	if err != nil {
		panic(fmt.Sprintf("%v\n%s", err, b.Bytes()))
	}
	return out
}

// oneLine is Help as one comment line's text.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func genRecordNames(defs []Def) []byte {
	var b bytes.Buffer
	b.WriteString(genHeader + "package record\n\n")
	b.WriteString("// Metric names: the keys of [Metrics] in metrics.json, and of every export, one per\n" +
		"// metric of package metric's catalogue (docs/metrics.md). The names are AIPerf's tags\n" +
		"// where AIPerf has the metric; the *_vllm ones follow `vllm bench serve`.\n")
	b.WriteString("const (\n")
	for _, d := range defs {
		fmt.Fprintf(&b, "\t// Metric%s (%s, %s, %s): %s\n", d.Ident, d.Unit, d.Kind, d.Origin, oneLine(d.Help))
		fmt.Fprintf(&b, "\tMetric%s = %q\n", d.Ident, d.Name)
	}
	b.WriteString(")\n")
	return gofmt(&b)
}

func genCheckConsts(defs []Def) []byte {
	var b bytes.Buffer
	b.WriteString(genHeader + "package check\n\n")
	b.WriteString("// Per-request metrics that [Bound], [Metric.Sample] and the rules read, by their rule\n" +
		"// names. Every per-request metric of package metric's catalogue is a [Metric] (its\n" +
		"// name, e.g. Metric(\"time_to_second_token\")); these have a short name. Latencies\n" +
		"// are in seconds here, lengths in tokens.\n")
	b.WriteString("const (\n")
	for _, d := range defs {
		if d.Kind != PerRequest || d.Const == "" {
			continue
		}
		fmt.Fprintf(&b, "\t// %s is %s: %s\n", d.Const, d.Name, oneLine(d.Help))
		fmt.Fprintf(&b, "\t%s Metric = %q\n", d.Const, d.RuleName())
	}
	b.WriteString(")\n")
	return gofmt(&b)
}

func genPerftestConsts(defs []Def) []byte {
	var b bytes.Buffer
	b.WriteString(genHeader + "package perftest\n\n")
	b.WriteString("import \"github.com/perfgate/perfgate/perftest/check\"\n\n")
	b.WriteString("// Per-request metrics for [Bound] and [Result.AssertBound] (see docs/metrics.md).\n")
	b.WriteString("const (\n")
	for _, d := range defs {
		if d.Kind != PerRequest || d.Const == "" {
			continue
		}
		fmt.Fprintf(&b, "\t%s = check.%s // %s\n", d.Const, d.Const, d.Name)
	}
	b.WriteString(")\n")
	return gofmt(&b)
}

func genDoc(defs []Def) []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Generated from package metric's catalogue (metric/catalogue.go) by `go test ./metric -run TestMetricsDocCurrent -update`. Do not edit. -->\n\n")
	b.WriteString("# Metrics\n\n")
	b.WriteString("Every metric perfgate reports is defined once, in the catalogue in `metric/catalogue.go`.\n" +
		"Its name is the key in `metrics.json`, in `profile_export_aiperf.json` and `.csv`, and (for a\n" +
		"per-request metric) in the rule grammar; it is AIPerf's tag where AIPerf has the metric, so one\n" +
		"key means one quantity in every artifact. Latencies are in milliseconds in every report; a rule's\n" +
		"latency is written as Go duration text (`250ms`, a bare number is ms).\n\n")
	b.WriteString("Rules (`--assert`, `objectives.rules`, `Result.Assert`) bound a quantile of any per-request\n" +
		"metric by its rule name or its full name: `ttft_p99<=250ms`, `time_to_second_token_p50<=20ms`,\n" +
		"`osl_p1>=100`. Metrics marked *reasoning only* are reported only when some request had\n" +
		"reasoning tokens (without them TTFO is TTFT, output tokens are OSL, reasoning is 0).\n\n")
	b.WriteString("A rule's value is in the metric's unit below, and verdicts print it in that unit: a\n" +
		"latency (`ms`, `sec`) as a duration, a token count as a bare number, `images` as `2 img`,\n" +
		"`requests` as `2 req`, a throughput as `2 tok/s`, `2 req/s`, `2 img/s` or `2 audio s/s`, a\n" +
		"`ratio` as a plain number. A value other than a latency may carry that suffix:\n" +
		"`generated_images_p50>=2` and `generated_images_p50>=2 img` are the same rule. Every metric\n" +
		"is in one of these units (`metric.Units`); a metric added in another is refused.\n\n")
	sections := []struct {
		kind  Kind
		title string
		intro string
	}{
		{PerRequest, "Per-request metrics", "One value per successful measured request, summarised as avg, std (population), min, max and the p1…p99 percentiles (numpy's linear interpolation)."},
		{PerChunk, "Per-chunk metrics", "One value per gap between chunks, pooled over the requests in a sketch (percentiles within 1% relative error; count, mean, std, min and max exact). Not a rule metric."},
		{PerRun, "Run metrics", "One value for the run. The throughput floors are the rules `output_token_throughput>=X` and `request_throughput>=X`; the error rate is `error_rate<=X`; goodput is `goodput>=X`."},
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", s.title, s.intro)
		if s.kind == PerRequest {
			b.WriteString("| Name | Rule name | Unit | Better | From | Definition |\n|---|---|---|---|---|---|\n")
		} else {
			b.WriteString("| Name | Unit | Better | From | Definition |\n|---|---|---|---|---|\n")
		}
		for _, d := range defs {
			if d.Kind != s.kind {
				continue
			}
			help := strings.ReplaceAll(oneLine(d.Help), "|", "\\|")
			if d.ReasoningOnly {
				help += " *Reasoning only.*"
			}
			if s.kind == PerRequest {
				fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s |\n", d.Name, d.RuleName(), d.Unit, d.Better, d.Origin, help)
			} else {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Unit, d.Better, d.Origin, help)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("## Adding a metric\n\n" +
		"Add one `Def` to `builtin` in `metric/catalogue.go`, then run\n" +
		"`go test ./metric -run TestMetricsDocCurrent -update`, which regenerates `record/names.go`,\n" +
		"`perftest/check/metrics.go`, `perftest/metrics.go` and this page. The accumulator, the run's\n" +
		"summary, the console table, the exports, the rule grammar, the `--assert` help and the\n" +
		"regression gate read the catalogue: a per-request metric's p50, p90 and p99 (a run metric's\n" +
		"value) are run statistics the gate and the history keep and compare when named\n" +
		"([regression.md](regression.md#what-is-compared)), unless its `Def` sets `NoRunStat`.\n" +
		"The names the rule grammar takes are pinned one a line in\n" +
		"`perftest/check/testdata/rule_names.golden`, so that a metric removed or renamed fails a\n" +
		"test: `go test ./perftest/check -run TestRuleNames -update` adds the new metric's line.\n\n" +
		"- A metric derived from values the catalogue already has sets `Value`, a function of\n" +
		"  `metric.Request` (`Request.Raw(name)` reads a raw metric's value): one file.\n" +
		"- A raw measurement (a value the client measures) is a field of `record.Client`, set where\n" +
		"  the client measures it, and a `Def` whose `Record` reads that field (`metric.RecordDuration`,\n" +
		"  `metric.RecordCount`): the accumulator and the run's summary keep it exactly, 8 bytes a\n" +
		"  request, only in runs where some request has it. Three files: the record, the place it is\n" +
		"  measured, the catalogue.\n")
	return b.Bytes()
}
