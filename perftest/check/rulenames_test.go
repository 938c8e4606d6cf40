package check

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
)

// ruleNamesFile pins the names the rule grammar takes, one a line and sorted, so a
// metric added to the catalogue is a line added (by -update) that merges beside
// another helper's, not an edit of one long pinned message.
const ruleNamesFile = "testdata/rule_names.golden"

// ruleNames lists the names the rule grammar's messages offer, as the file holds them:
// METRIC_pNN for each per-request metric ([MetricNames]), the other names as written
// (runRuleNames), sorted.
func ruleNames() []string {
	var ns []string
	for _, n := range splitNames(MetricNames()) {
		ns = append(ns, n+"_pNN")
	}
	ns = append(ns, splitNames(runRuleNames())...)
	slices.Sort(ns)
	return ns
}

// splitNames splits "a, b or c" into its names.
func splitNames(list string) []string {
	i := strings.LastIndex(list, " or ")
	if i < 0 {
		return []string{list}
	}
	return append(strings.Split(list[:i], ", "), list[i+len(" or "):])
}

// TestRuleNames: the names the rule grammar takes are the pinned ones, so removing or
// renaming a metric in the catalogue (or a run-level rule) fails here, and every name
// the messages offer parses as a rule in at least one direction.
func TestRuleNames(t *testing.T) {
	got := ruleNames()
	if *update {
		head := "# The names the rule grammar takes (check.ParseRule), one a line, sorted: METRIC_pNN for\n" +
			"# each per-request metric of the catalogue, the others as written. TestRuleNames checks\n" +
			"# them against the catalogue; go test ./perftest/check -run TestRuleNames -update rewrites it.\n"
		golden(t, "rule_names", head+strings.Join(got, "\n")+"\n")
		return
	}
	for _, msg := range pinnedNamesDiff(got, readNames(t, ruleNamesFile)) {
		t.Error(msg)
	}
	for _, n := range got {
		base := strings.Replace(n, "_pNN", "_p50", 1)
		if n == "tokenizer_match" {
			if _, err := ParseRule(n); err != nil {
				t.Errorf("ParseRule(%q): %v", n, err)
			}
			continue
		}
		_, errAtMost := ParseRule(base + "<=1")
		_, errAtLeast := ParseRule(base + ">=1")
		if errAtMost != nil && errAtLeast != nil {
			t.Errorf("%s is offered in the rule messages but parses in neither direction:\n\t%v\n\t%v", n, errAtMost, errAtLeast)
		}
	}
}

// pinnedNamesDiff says how the names the grammar takes (got) differ from the pinned
// ones (want): none is a pass.
func pinnedNamesDiff(got, want []string) []string {
	var gone, added, msgs []string
	for _, n := range want {
		if !slices.Contains(got, n) {
			gone = append(gone, n)
		}
	}
	for _, n := range got {
		if !slices.Contains(want, n) {
			added = append(added, n)
		}
	}
	if len(gone) > 0 {
		msgs = append(msgs, fmt.Sprintf("the rule grammar no longer takes %s, pinned in %s: a rule that names it stops parsing (if that is meant, say so in CHANGELOG.md and run go test ./perftest/check -run TestRuleNames -update)", strings.Join(gone, ", "), ruleNamesFile))
	}
	if len(added) > 0 {
		msgs = append(msgs, fmt.Sprintf("the rule grammar takes %s, not in %s: go test ./perftest/check -run TestRuleNames -update adds it", strings.Join(added, ", "), ruleNamesFile))
	}
	return msgs
}

// The pin fails when a metric is added to the catalogue without its line, and when a
// pinned one is gone (renamed or removed).
func TestRuleNamesPinCatches(t *testing.T) {
	pinned := readNames(t, ruleNamesFile)
	restore := metric.Extend(metric.Def{Name: "pin_probe", Header: "Pin Probe", Label: "pin probe", Unit: metric.UnitTokens,
		Kind: metric.PerRequest, Origin: "test", Help: "OSL again.",
		Value: func(q *metric.Request) (float64, bool) { return float64(q.OSL), true }})
	msgs := pinnedNamesDiff(ruleNames(), pinned)
	restore()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "takes pin_probe_pNN, not in") {
		t.Errorf("a metric added without its line: %q; want it named as not pinned", msgs)
	}
	msgs = pinnedNamesDiff(ruleNames(), append(slices.Clone(pinned), "ttfb_pNN"))
	if len(msgs) != 1 || !strings.Contains(msgs[0], "no longer takes ttfb_pNN, pinned in") {
		t.Errorf("a pinned name the grammar lost: %q; want it named as gone", msgs)
	}
	if msgs := pinnedNamesDiff(ruleNames(), pinned); len(msgs) != 0 {
		t.Errorf("after the probe was removed: %q", msgs)
	}
}

// readNames reads a names file: one name a line, # comments and blank lines skipped.
func readNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestRuleNames -update writes it)", err)
	}
	defer f.Close()
	var ns []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			ns = append(ns, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ns
}
