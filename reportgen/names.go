package reportgen

import (
	"strings"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// metricInfo is how a metric is named and shown, from its entry in package metric's
// catalogue: its export key, its row header, and whether the console shows it.
type metricInfo struct {
	Tag     string // export key (AIPerf's tag; the metrics.json key)
	Header  string // human-readable name
	Console bool   // shown in the console summary table by default
}

// info returns the naming of a metric; metrics outside the catalogue get their own
// name as tag and a title-cased header, and are left out of the console table.
func info(name string) metricInfo {
	if d, ok := metric.Lookup(name); ok {
		return metricInfo{Tag: d.Name, Header: d.Header, Console: d.Console}
	}
	words := strings.Split(name, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return metricInfo{Tag: name, Header: strings.Join(words, " ")}
}

// order lists the catalogue's metrics whose kind is per-run (scalars) or not
// (distributions), in the catalogue's order, which is the reports' order.
func order(scalars bool) []string {
	var out []string
	for _, d := range metric.Catalogue() {
		if (d.Kind == metric.PerRun) == scalars {
			out = append(out, d.Name)
		}
	}
	return out
}

// aiperfUnit spells a unit as AIPerf does ("sec", "requests/sec", "tokens/sec").
func aiperfUnit(u string) string {
	switch u {
	case "s", "sec", "seconds":
		return "sec"
	case "req/s", "requests/s", "request/s", "requests/sec":
		return "requests/sec"
	case "tokens/s", "tok/s", "tokens/sec":
		return "tokens/sec"
	case "tokens/s/user", "tokens/sec/user":
		return "tokens/sec/user"
	case "req", "requests":
		return "requests"
	case "tok", "tokens":
		return "tokens"
	}
	return u
}

// ordered returns the names of m's stats (or scalars) in report order: the known
// order first, then any others sorted by name.
func ordered(known []string, present map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range known {
		if present[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	var rest []string
	for n := range present {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sortStrings(rest)
	return append(out, rest...)
}

func statNames(m record.Metrics) []string {
	p := map[string]bool{}
	for n := range m.Stats {
		p[n] = true
	}
	return ordered(order(false), p)
}

func scalarNames(m record.Metrics) []string {
	p := map[string]bool{}
	for n := range m.Scalars {
		p[n] = true
	}
	return ordered(order(true), p)
}

// Tag returns the AIPerf tag a metric is exported under in profile_export_aiperf.json
// (the record.Metric… name itself for metrics AIPerf lacks).
func Tag(name string) string { return info(name).Tag }

// Label returns a metric's row label in the console table, the CSV and the HTML
// report: its header with the unit in parentheses ("Request Latency (ms)").
func Label(name, unit string) string { return label(info(name).Header, unit) }
