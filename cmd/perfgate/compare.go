package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/tokenizer"
)

// cmdCompare compares two recordings: the lengths two runs sent (an HTML report and a
// verdict: identical, same distribution, or different, which exits 99), or, given two
// capture files, the prompts two clients sent ("N / M prompts differ").
func cmdCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compare", "--a FILE --b FILE [--assert identical|same] [--out compare.html]\n       perfgate compare A B   (the same, positionally; two capture files give a prompt diff)")
	a := fs.String("a", "", "first recording: a mock-server recording (with its .summary.json companion if present), perfgate_records.jsonl/client.jsonl, AIPerf's profile_export.jsonl, a run's artifact directory, or a capture file (perfgate capture --out)")
	b := fs.String("b", "", "second recording (same kinds as --a)")
	la := fs.String("label-a", "", "label of --a in the report (default: its file name)")
	lb := fs.String("label-b", "", "label of --b in the report (default: its file name)")
	out := fs.String("out", "", "the HTML report to write (default compare.html; capture-diff.html for two captures)")
	alpha := fs.Float64("alpha", 0.05, "significance level of the 'same distribution' verdict (its two KS tests run at alpha/2 each)")
	topN := fs.Int("top", 20, "tokens listed in the vocabulary difference")
	must := fs.String("assert", "", "what must hold, else exit 99: identical (the same lengths, as equal seeds give) or same (one distribution at --alpha); without it only 'different' exits 99")
	tok := fs.String("tokenizer", "", "tokenizer decoding the vocabulary's token ids (default: the one the recordings' summaries name)")
	show := fs.Int("show", 5, "two captures: differing prompts printed and drawn in the HTML view")
	var summaryMD string
	registerSummaryFlag(fs, &summaryMD)
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && len(pos) < 2 {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(pos) > 0 && *a == "" {
		*a, pos = pos[0], pos[1:]
	}
	if len(pos) > 0 && *b == "" {
		*b, pos = pos[0], pos[1:]
	}
	switch {
	case len(pos) > 0:
		return invalidf("unexpected argument %q: --a and --b are given already", pos[0])
	case *a == "":
		return invalidf("--a is required: the first recording to compare")
	case *b == "":
		return invalidf("--b is required: the second recording to compare")
	case !(*alpha > 0 && *alpha < 1):
		return invalidf("--alpha: want a level in (0, 1), got %g", *alpha)
	case *topN < 1:
		return invalidf("--top: want at least 1, got %d", *topN)
	case *must != "" && *must != "identical" && *must != "same":
		return invalidf("--assert %q: want identical or same", *must)
	case *show < 0:
		return invalidf("--show: want 0 or more, got %d", *show)
	}
	capA, capB := isCapture(*a), isCapture(*b)
	switch {
	case capA && capB:
		return diffCaptures(e, *a, *b, *la, *lb, cmp.Or(*out, "capture-diff.html"), *show, *must)
	case capA || capB:
		return invalidf("%s is a capture file and %s is not: compare two captures (prompts) or two recordings (lengths)",
			map[bool]string{true: *a, false: *b}[capA], map[bool]string{true: *b, false: *a}[capA])
	}
	ra, err := reportgen.LoadRecording(*a, *la)
	if err != nil {
		return invalidf("--a: %v", err)
	}
	rb, err := reportgen.LoadRecording(*b, *lb)
	if err != nil {
		return invalidf("--b: %v", err)
	}
	opts := reportgen.CompareOptions{Alpha: *alpha, TopN: *topN}
	if err := vocabDecoder(e, &opts, *tok, ra, rb); err != nil {
		return err
	}
	*out = cmp.Or(*out, "compare.html")
	err = reportgen.WriteFileAtomic(*out, func(w io.Writer) error {
		return reportgen.WriteCompareReport(w, ra, rb, opts)
	})
	if err != nil {
		return invalidf("--out: %v", err)
	}
	v := reportgen.Compare(ra, rb, *alpha)
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(e.stdout, "compared %s (%d requests) with %s (%d requests): %s\n", ra.Label, len(ra.ISL), rb.Label, len(rb.ISL), abs)
	want := cmp.Or(*must, "same")
	kind := map[string]string{"same": reportgen.SameDistribution, "identical": reportgen.Identical}[want]
	s := v.Summary(ra, rb, kind)
	s.Artifacts = []reportgen.SummaryLink{{Label: "comparison report", Path: *out}}
	setSummary(e, s)
	if !v.Holds(kind) {
		fmt.Fprintf(e.stdout, "FAIL %s (want %s)\n", v.Text, map[string]string{"same": "the same distribution", "identical": "identical lengths"}[want])
		return writeSummary(e, summaryMD, errAssertFailed)
	}
	fmt.Fprintf(e.stdout, "PASS %s\n", v.Text)
	return writeSummary(e, summaryMD, nil)
}

// vocabDecoder sets opts.Decode and opts.TemplateIDs from the tokenizer named by name,
// else by the recordings' summaries; without one the report shows ids.
func vocabDecoder(e *env, opts *reportgen.CompareOptions, name string, rs ...reportgen.Recording) error {
	explicit := name != ""
	for _, r := range rs {
		if name == "" && r.Summary != nil {
			name = r.Summary.Tokenizer
		}
	}
	if name == "" {
		return nil
	}
	t, err := tokenizer.Load(name)
	if err != nil {
		if explicit {
			return invalidf("--tokenizer: %v", err)
		}
		fmt.Fprintf(e.stderr, "perfgate compare: the recordings' tokenizer %s cannot be loaded (%v); the vocabulary shows token ids\n", name, err)
		return nil
	}
	opts.Decode = func(id int) string { return t.Decode([]int{id}, false) }
	text, _, err := t.ChatInput([]tokenizer.Message{{Role: "user", Content: ""}}, tokenizer.ChatOptions{AddGenerationPrompt: true})
	if err == nil {
		opts.TemplateIDs = map[int]bool{}
		for _, id := range t.Encode(text, false) {
			opts.TemplateIDs[id] = true
		}
	}
	return nil
}

// isCapture reports whether path is a capture file (perfgate capture --out): its first
// line has the capture's method, path and body_len fields.
func isCapture(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var first struct {
		Method  *string `json:"method"`
		Path    *string `json:"path"`
		BodyLen *int    `json:"body_len"`
	}
	dec := json.NewDecoder(f)
	if dec.Decode(&first) != nil {
		return false
	}
	return first.Method != nil && first.Path != nil && first.BodyLen != nil
}
