package run

import (
	"context"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// A server whose tokenizer (cl100k_base) is not the scenario's (gpt2), reached as a
// real endpoint: its outputs are exactly 48 of its own tokens, so the OSL fit passes
// on usage counts (--use-server-token-count) and fails on the client's gpt2 counts;
// the failure says how requests ended and how the two counts compare. A second server
// stops early (an OSL distribution, no ignore_eos): the failure counts the stops and
// suggests --ignore-eos.
func TestOSLFitServerTokenCount(t *testing.T) {
	srv := func(cfg mockserver.Config) string {
		cfg.Fast, cfg.Tokenizer = true, "cl100k_base"
		s, err := mockserver.New(mockserver.WithConfig(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.URL()
	}
	url := srv(mockserver.Config{})
	run := func(url string, usage, ignoreEOS bool) string {
		sc := scenario.Scenario{
			Tokenizer:  "gpt2",
			Objectives: scenario.Objectives{OSLFit: fixed(48)},
			Config: loadgen.Config{
				Target: loadgen.Target{
					URLs: []string{url},
				},
				Workload: loadgen.Workload{
					ISL:       fixed(32),
					OSL:       fixed(48),
					IgnoreEOS: ignoreEOS,
					Seed:      1,
				},
				Load: loadgen.Load{
					Concurrency: 4,
				},
				Stop: loadgen.Stop{
					Requests: 40,
				},
				Recording: loadgen.Recording{
					UsageOSL: usage,
					UsageISL: usage,
				},
			},
		}
		out, err := Run(context.Background(), sc, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		v := out.LengthFit("osl", distribution.Length{Dist: sc.Objectives.OSLFit.Distribution}, 0)
		if usage != v.Pass {
			t.Errorf("usage=%v: OSL fit pass=%v, want %v:\n%s", usage, v.Pass, usage, v)
		}
		return v.String()
	}
	if s := run(url, true, true); !strings.Contains(s, "usage count") {
		t.Errorf("usage-based fit does not say where its lengths came from:\n%s", s)
	}
	fail := run(url, false, true)
	for _, want := range []string{"client count", "finish:", "0 stop, 40 length (of 40 requests", "client vs usage:", "differ", "--use-server-token-count"} {
		if !strings.Contains(fail, want) {
			t.Errorf("client-count failure lacks %q:\n%s", want, fail)
		}
	}
	short := srv(mockserver.Config{OSL: distribution.Spec{Distribution: distribution.MustParse("uniform:4,20")}})
	early := run(short, false, false)
	for _, want := range []string{"40 stop, 0 length", "--ignore-eos"} {
		if !strings.Contains(early, want) {
			t.Errorf("early-stop failure lacks %q:\n%s", want, early)
		}
	}
	t.Logf("client-count failure:\n%s\nearly-stop failure:\n%s", fail, early)
}
