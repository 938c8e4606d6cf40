package run

import (
	"fmt"
	"slices"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// A RunOption changes how [Run] carries out a scenario without changing the scenario
// itself, which stays plain data: [OnRecord], [OnInFlight], [WithTokenizer], [WithCommand]. Options
// are sealed (only this package makes them) and printable.
type RunOption interface{ apply(*runConfig) }

// runConfig is what the options set; the zero value is Run's default.
type runConfig struct {
	onRecord   func(record.Client)
	onInFlight func(int) // OnInFlight
	tok        *tokenizer.Tokenizer
	command    []string
	shard      *ShardInfo // WithShard
}

func newRunConfig(opts []RunOption) runConfig {
	var c runConfig
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// OnRecord returns an option that calls f with each request's record as it finishes,
// e.g. to show progress. f is called from one goroutine, in completion order, while
// the run goes on; warm-up requests are included, with Warmup set. f must return
// quickly: the load generator's collector waits for it. A nil f does nothing.
func OnRecord(f func(record.Client)) RunOption { return onRecord{f} }

type onRecord struct{ f func(record.Client) }

func (o onRecord) apply(c *runConfig) { c.onRecord = o.f }
func (o onRecord) String() string     { return "run.OnRecord(func)" }

// WithTokenizer returns an option that makes Run use tok instead of loading the
// scenario's Tokenizer (which should name the same tokenizer: it is what the mock and
// the manifest are told). Use it to load a tokenizer once for many runs. nil = load it.
func WithTokenizer(tok *tokenizer.Tokenizer) RunOption { return withTokenizer{tok} }

type withTokenizer struct{ tok *tokenizer.Tokenizer }

func (o withTokenizer) apply(c *runConfig) { c.tok = o.tok }
func (o withTokenizer) String() string {
	if o.tok == nil {
		return "run.WithTokenizer(nil)"
	}
	return fmt.Sprintf("run.WithTokenizer(%s)", o.tok.Name())
}

// WithCommand returns an option that records args, the command line that started the
// run, in the artifacts' manifest (reportgen.Manifest.Command).
func WithCommand(args ...string) RunOption { return withCommand(slices.Clone(args)) }

type withCommand []string

func (o withCommand) apply(c *runConfig) { c.command = o }
func (o withCommand) String() string     { return fmt.Sprintf("run.WithCommand(%q)", []string(o)) }
