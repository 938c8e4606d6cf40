package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/perfgate/perfgate/reportgen"
)

func cmdCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compare", "--a FILE --b FILE [--label-a A] [--label-b B] [--out compare.html]")
	a := fs.String("a", "", "first recording: a mock-server recording (with its .summary.json companion if present), perfgate_records.jsonl/client.jsonl, AIPerf's profile_export.jsonl, or a run's artifact directory")
	b := fs.String("b", "", "second recording (same kinds as --a)")
	la := fs.String("label-a", "", "label of --a in the report (default: its file name)")
	lb := fs.String("label-b", "", "label of --b in the report (default: its file name)")
	out := fs.String("out", "compare.html", "the HTML report to write")
	alpha := fs.Float64("alpha", 0.05, "significance level of the two-sample tests")
	topN := fs.Int("top", 20, "tokens listed in the vocabulary difference")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *a == "":
		return invalidf("--a is required: the first recording to compare")
	case *b == "":
		return invalidf("--b is required: the second recording to compare")
	case !(*alpha > 0 && *alpha < 1):
		return invalidf("--alpha: want a level in (0, 1), got %g", *alpha)
	case *topN < 1:
		return invalidf("--top: want at least 1, got %d", *topN)
	}
	ra, err := reportgen.LoadRecording(*a, *la)
	if err != nil {
		return invalidf("--a: %v", err)
	}
	rb, err := reportgen.LoadRecording(*b, *lb)
	if err != nil {
		return invalidf("--b: %v", err)
	}
	err = reportgen.WriteFileAtomic(*out, func(w io.Writer) error {
		return reportgen.WriteCompareReport(w, ra, rb, reportgen.CompareOptions{Alpha: *alpha, TopN: *topN})
	})
	if err != nil {
		return invalidf("--out: %v", err)
	}
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(e.stdout, "compared %s (%d requests) with %s (%d requests): %s\n", ra.Label, len(ra.ISL), rb.Label, len(rb.ISL), abs)
	return nil
}
