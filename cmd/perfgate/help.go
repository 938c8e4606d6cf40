package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// A flag's topic is the data beside it: its usage string starts with "[topic] ", one of
// flagTopics' tags, so a flag added to any block of profile's flags says where its
// help lists it (TestProfileFlagsHaveTopics fails for one that does not).
var flagTopics = []struct{ tag, title string }{
	{"target", "Target: the server, its API and the model"},
	{"workload", "Workload: what is sent (lengths, prompts, conversations, seed)"},
	{"load", "Load: how hard and how often (concurrency, rate, repeats, sweeps, searches, shards)"},
	{"stop", "Stop: when requests and the run end"},
	{"recording", "Recording: what is counted and what is left out"},
	{"objectives", "Objectives: what must hold, else exit 99"},
	{"server metrics", "Server metrics: Prometheus scrapes during the run"},
	{"output", "Output: artifacts, exports and the console"},
}

// profileExamples head profile's help, as `go help` and k6 show examples first.
var profileExamples = []struct{ what, cmd string }{
	{"the in-process mock server, 500 requests at 8 in flight, lengths as configured:",
		"perfgate profile --mock --request-count 500 --concurrency 8 --isl-dist normal:128,20 --osl-dist fixed:64 --ignore-eos"},
	{"a real server, one minute, gated on latency SLOs (exit 99 when one fails):",
		"perfgate profile --url http://127.0.0.1:8000 --model-names my-model --concurrency 16 --benchmark-duration 60 \\\n      --assert 'ttft_p99<=250ms' --goodput 'time_to_first_token:200 inter_token_latency:20' --assert 'goodput>=0.95'"},
	{"a concurrency sweep, three runs a point, with latency-throughput charts:",
		"perfgate profile --mock --sweep-concurrency 1,2,4,8,16 --num-runs 3 --request-count 200"},
}

// splitTopic returns a usage string's topic tag ("" when it has none) and its text.
func splitTopic(usage string) (topic, text string) {
	if rest, ok := strings.CutPrefix(usage, "["); ok {
		if t, after, ok := strings.Cut(rest, "] "); ok {
			return t, after
		}
	}
	return "", usage
}

// flagEntry is one flag of a help listing with its aliases (flags sharing a usage).
type flagEntry struct {
	aliases     []string
	f           *flag.Flag
	topic, text string
}

func (en flagEntry) names() string {
	ns := make([]string, len(en.aliases))
	for i, n := range en.aliases {
		if len(n) == 1 {
			ns[i] = "-" + n
		} else {
			ns[i] = "--" + n
		}
	}
	return strings.Join(ns, ", ")
}

// def is " (default X)" for a flag whose default value is not its type's zero value,
// unless its usage states the default itself.
func (en flagEntry) def() string {
	if d := en.f.DefValue; !zeroDefault(d) && !statedDefault.MatchString(en.text) {
		return fmt.Sprintf(" (default %s)", d)
	}
	return ""
}

// zeroDefault reports whether a flag's DefValue is its type's zero value, which most
// flags here use for "unset" (the library's default then applies).
func zeroDefault(d string) bool {
	return d == "" || d == "0" || d == "false" || d == "[]"
}

// statedDefault finds the default a usage states: "(default X)", "(default: X)" or
// "(…; default X)", up to the next ";" or ")". A "default" after a comma is about
// something else ("(--num-runs, default 5)").
var statedDefault = regexp.MustCompile(`(?:\(|; )(default:? [^;)]+)`)

// short is the flag's text in -h: the first clause of its usage, whole, so a list of the
// values it takes is never cut, and its default: the one the usage states, else the
// flag's own default value when that is not the zero value.
func (en flagEntry) short() string {
	s := firstClause(en.text)
	if strings.Contains(s, "default") {
		return s
	}
	if m := statedDefault.FindStringSubmatch(en.text); m != nil {
		return s + " (" + strings.TrimSpace(m[1]) + ")"
	}
	return s + en.def()
}

// shortWidth is the width -h wraps a flag's text to, names column included.
const shortWidth = 110

// writeShort writes one flag of -h: its names in a 34-column field (on a line of their
// own when longer), then its short text, wrapped under the text column.
func writeShort(b *strings.Builder, en *flagEntry) {
	const col = 2 + 34 + 1
	n := en.names()
	if len(n) > 34 {
		fmt.Fprintf(b, "  %s\n", n)
		n = ""
	}
	fmt.Fprintf(b, "  %-34s ", n)
	line := 0
	for i, w := range strings.Fields(en.short()) {
		if i > 0 && col+line+1+len([]rune(w)) > shortWidth {
			fmt.Fprintf(b, "\n%*s", col, "")
			line = 0
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len([]rune(w))
	}
	b.WriteByte('\n')
}

// flagEntries lists fs's flags, aliases (same usage) together, sorted by first name.
func flagEntries(fs *flag.FlagSet) []*flagEntry {
	byUsage := map[string]*flagEntry{}
	var order []*flagEntry
	fs.VisitAll(func(f *flag.Flag) {
		if en, ok := byUsage[f.Usage]; ok {
			en.aliases = append(en.aliases, f.Name)
			return
		}
		en := &flagEntry{aliases: []string{f.Name}, f: f}
		en.topic, en.text = splitTopic(f.Usage)
		byUsage[f.Usage] = en
		order = append(order, en)
	})
	// "short for --X" makes a one-letter flag an alias of --X.
	var kept []*flagEntry
	for _, en := range order {
		if long, ok := strings.CutPrefix(en.text, "short for --"); ok {
			if f := fs.Lookup(long); f != nil && byUsage[f.Usage] != nil {
				target := byUsage[f.Usage]
				target.aliases = append(target.aliases, en.aliases...)
				continue
			}
		}
		kept = append(kept, en)
	}
	for _, en := range kept {
		sort.Slice(en.aliases, func(i, j int) bool {
			if (len(en.aliases[i]) == 1) != (len(en.aliases[j]) == 1) {
				return len(en.aliases[i]) == 1
			}
			return en.aliases[i] < en.aliases[j]
		})
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].sortKey() < kept[j].sortKey() })
	return kept
}

// sortKey is the first long name (one-letter aliases list first but sort by it).
func (en flagEntry) sortKey() string {
	for _, n := range en.aliases {
		if len(n) > 1 {
			return n
		}
	}
	return en.aliases[0]
}

// profileHelp writes profile's help: the examples, then the flags by topic. The short
// form (-h) gives each flag's names, the first clause of its usage (with the values it
// takes) and its default; full (--help-all) the whole usage and the default.
func profileHelp(w io.Writer, fs *flag.FlagSet, full bool) {
	var b strings.Builder
	b.WriteString("Usage: perfgate profile --url URL | --mock [flags]\n\nExamples:\n")
	for _, ex := range profileExamples {
		fmt.Fprintf(&b, "  # %s\n  %s\n\n", ex.what, ex.cmd)
	}
	entries := flagEntries(fs)
	for _, t := range flagTopics {
		fmt.Fprintf(&b, "%s\n", t.title)
		for _, en := range entries {
			if en.topic != t.tag {
				continue
			}
			if full {
				fmt.Fprintf(&b, "  %s\n      %s%s\n", en.names(), en.text, en.def())
			} else {
				writeShort(&b, en)
			}
		}
		b.WriteString("\n")
	}
	var other []*flagEntry
	for _, en := range entries {
		if !knownTopic(en.topic) {
			other = append(other, en)
		}
	}
	if len(other) > 0 { // a flag without a topic is still listed (and fails a test)
		b.WriteString("Other\n")
		for _, en := range other {
			fmt.Fprintf(&b, "  %s\n      %s%s\n", en.names(), en.text, en.def())
		}
		b.WriteString("\n")
	}
	if full {
		b.WriteString("Flags take one or two dashes. perfgate profile -h gives the short form.\n")
	} else {
		fmt.Fprintf(&b, "Flags take one or two dashes. perfgate profile --help-all shows every flag's full description (%d flags).\n", len(entries))
	}
	_, _ = io.WriteString(w, b.String())
}

func knownTopic(t string) bool {
	for _, ft := range flagTopics {
		if ft.tag == t {
			return true
		}
	}
	return false
}

// firstClause shortens a usage to its first clause (before "; " or " (", when that
// leaves enough to read). What says which values the flag takes stays: a part with an
// example ("e.g.") or the meaning of a value ("0 = none") is not cut.
func firstClause(s string) string {
	says := func(rest string) bool { return strings.Contains(rest, "e.g.") || strings.Contains(rest, " = ") }
	if i := strings.Index(s, "; "); i >= 20 && strings.Count(s[:i], "(") == strings.Count(s[:i], ")") && !says(s[i:]) {
		s = s[:i] // not inside parentheses
	}
	if i := strings.Index(s, " ("); i >= 20 && strings.HasSuffix(s, ")") && strings.Count(s[i:], "(") == 1 && !says(s[i:]) {
		s = s[:i] // a closing remark in parentheses
	}
	return s
}
