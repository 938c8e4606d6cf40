package liveout

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dashboardExprs returns every PromQL expression of docs/grafana/perfgate-live.json:
// the panels' targets and the variables' queries.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/grafana/perfgate-live.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Definition string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Definition != "" {
			out = append(out, v.Definition)
		}
	}
	return out
}

// TestGrafanaDashboard: the shipped dashboard names only series the remote-write
// output sends (a renamed series fails here), and shows each of them.
func TestGrafanaDashboard(t *testing.T) {
	exprs := dashboardExprs(t)
	if len(exprs) < 8 {
		t.Fatalf("%d expressions in the dashboard", len(exprs))
	}
	known := map[string]bool{}
	for _, s := range AllSeries {
		known[s.Prom] = true
		if s.Type == Histogram {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				known[s.Prom+suf] = true
			}
		}
	}
	used := map[string]bool{}
	for _, e := range exprs {
		for _, name := range regexp.MustCompile(`perfgate_[a-z_]+`).FindAllString(e, -1) {
			if !known[name] {
				t.Errorf("the dashboard queries %s, which liveout does not send: %s", name, e)
			}
			used[strings.TrimSuffix(name, "_bucket")] = true
		}
	}
	for _, s := range AllSeries {
		if s.Prom != SeriesInputTokens.Prom && s.Prom != SeriesOutputTokens.Prom && !used[s.Prom] {
			t.Errorf("the dashboard does not show %s", s.Prom)
		}
	}
}
