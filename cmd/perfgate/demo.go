package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// DefaultDemoDir is where `perfgate demo` (and `make demo`) writes its artifacts.
const DefaultDemoDir = "demo-out"

// demoScenario is the demo's workload: the in-process mock with the embedded gpt2
// tokenizer, 8 concurrent streams, a few hundred chat requests with normal input and
// output lengths, and assertions a healthy mock meets.
func demoScenario(requests, concurrency int) (scenario.Scenario, profileOpts) {
	sc := scenario.Scenario{
		Name:      "demo",
		Tokenizer: "gpt2",
		Mock: mockserver.Config{
			TTFT:            distribution.Spec{Distribution: distribution.MustParse("lognormal:mean=25,stddev=8")},
			ITL:             distribution.Spec{Distribution: distribution.MustParse("lognormal:mean=3,stddev=0.6")},
			TTFTPerISLToken: 20 * time.Microsecond,
		},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:       distribution.Spec{Distribution: distribution.MustParse("normal:128,24")},
				OSL:       distribution.Spec{Distribution: distribution.MustParse("normal:48,12")},
				IgnoreEOS: true,
				Seed:      42,
			},
			Load: loadgen.Load{
				Concurrency: concurrency,
			},
			Stop: loadgen.Stop{
				Requests:       requests,
				WarmupRequests: 8,
			},
		},
	}
	sc.Objectives.SLO = check.SLO{TTFT: 250e6, ITL: 50e6}
	// The tail the request count can bound (docs/validity.md): p99 from 299 requests.
	p := 0.99
	for _, q := range []float64{0.9, 0.5} {
		if check.QuantileNeed(p, true, 0) > requests {
			p = q
		}
	}
	sc.Objectives.Rules = []string{"goodput>=0.9", check.QuantileRule(check.TTFT, p, true, 0.5).String()}
	sc.SLO = sc.Objectives.SLO
	o := profileOpts{hasAsserts: true, alpha: check.DefaultAlpha, numRuns: 1}
	return sc, o
}

func cmdDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "[--out demo-out] [--requests 300] [--concurrency 8] [--ui-type dashboard|simple|none] [-q]")
	out := fs.String("out", DefaultDemoDir, "artifact directory")
	requests := fs.Int("requests", 300, "measured requests")
	conc := fs.Int("concurrency", 8, "concurrent streams")
	quiet := fs.Bool("q", false, "no progress and no table")
	var uiType string
	registerUITypeFlag(fs, &uiType)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkUIType(uiType); err != nil {
		return err
	}
	if *requests < 1 || *requests > 100000 {
		return invalidf("--requests: want 1 to 100000, got %d", *requests)
	}
	if *conc < 1 || *conc > 1024 {
		return invalidf("--concurrency: want 1 to 1024, got %d", *conc)
	}
	sc, o := demoScenario(*requests, *conc)
	o.artifactDir, o.quiet, o.uiType = *out, *quiet, uiType
	if !o.quiet {
		fmt.Fprintf(e.stdout, "perfgate demo: in-process mock server (gpt2 tokenizer), %d chat requests at concurrency %d, ISL %s, OSL %s\n",
			*requests, *conc, sc.ISL, sc.OSL)
	}
	r, err := runOne(ctx, e, sc, o, *out, "demo")
	if err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintln(e.stdout)
		printTable(e, r.out)
		fmt.Fprintln(e.stdout)
	}
	err = finish(ctx, e, r, o, *out)
	if !o.quiet {
		abs := artifactPath(*out)
		fmt.Fprintf(e.stdout, "open file://%s in a browser; AIPerf-compatible exports: %s, %s\n",
			filepath.Join(abs, reportgen.RunReportFile), reportgen.AIPerfJSONFile, reportgen.AIPerfCSVFile)
	}
	return err
}
