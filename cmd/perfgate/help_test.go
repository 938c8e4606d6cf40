package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
)

// TestProfileFlagsHaveTopics: every flag of profile says which topic its help lists it
// under; a flag added without a "[topic] " usage prefix fails here.
func TestProfileFlagsHaveTopics(t *testing.T) {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f profileFlags
	var o profileOpts
	registerProfileFlags(fs, &f, &o)
	n := 0
	fs.VisitAll(func(fl *flag.Flag) {
		n++
		if topic, _ := splitTopic(fl.Usage); !knownTopic(topic) {
			t.Errorf("flag --%s has no topic: start its usage with one of %s, e.g. \"[load] ...\"", fl.Name, topicTags())
		}
	})
	if n < 50 {
		t.Errorf("only %d profile flags registered", n)
	}
}

func topicTags() string {
	var tags []string
	for _, ft := range flagTopics {
		tags = append(tags, "["+ft.tag+"]")
	}
	return strings.Join(tags, " ")
}

// TestTopicCheckFails is the failure path of the topic check: an untagged flag has no
// known topic and is listed under "Other".
func TestTopicCheckFails(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("tagged", "", "[load] a tagged flag")
	fs.String("untagged", "", "no topic here")
	if topic, _ := splitTopic(fs.Lookup("untagged").Usage); knownTopic(topic) {
		t.Error("an untagged flag has a known topic")
	}
	var b bytes.Buffer
	profileHelp(&b, fs, false)
	out := b.String()
	if !strings.Contains(out, "Other\n  --untagged") || strings.Index(out, "--tagged") > strings.Index(out, "Other") {
		t.Errorf("help:\n%s", out)
	}
}

// TestProfileHelp: -h shows the examples first, then every topic in order with its
// flags on one line each; --help-all shows every flag with its full usage and default;
// neither shows a topic tag.
func TestProfileHelp(t *testing.T) {
	code, short, _ := cli(t, "profile", "-h")
	if code != ExitOK {
		t.Fatalf("profile -h: exit %d", code)
	}
	_, full, _ := cli(t, "profile", "--help-all")
	if !strings.HasPrefix(short, "Usage: perfgate profile") || strings.Index(short, "Examples:") > strings.Index(short, "Target:") {
		t.Errorf("-h does not start with the usage and the examples:\n%s", short[:min(len(short), 400)])
	}
	last := 0
	for _, ft := range flagTopics {
		i := strings.Index(short, "\n"+ft.title+"\n")
		if i < last {
			t.Errorf("-h: topic %q missing or out of order", ft.title)
		}
		last = i
		if !strings.Contains(full, "\n"+ft.title+"\n") {
			t.Errorf("--help-all lacks topic %q", ft.title)
		}
	}
	for _, out := range []string{short, full} {
		if strings.Contains(out, "\nOther\n") || strings.Contains(out, "[target]") || strings.Contains(out, "[load]") {
			t.Error("help lists a flag without a topic, or shows a tag")
		}
	}
	// Short: a flag's first clause and default; full: the whole descriptions.
	if !strings.Contains(short, "--search-tolerance                 relative tolerance of the search (default 0.05)\n") {
		t.Error("-h lacks the one-line form of --search-tolerance")
	}
	for _, want := range []string{"--search-tolerance\n      relative tolerance of the search (default 0.05)", "-u, --url\n", "(repeatable: several servers, see --url-strategy; or --mock)"} {
		if !strings.Contains(full, want) {
			t.Errorf("--help-all lacks %q", want)
		}
	}
	// -h wraps under its text column, so it can take more bytes; it says less.
	if len(strings.Fields(full)) < len(strings.Fields(short)) {
		t.Error("--help-all says less than -h")
	}
}

// shortText finds a flag's entry in profile -h (its names in the names column, or on a
// line of their own) and returns its text, wrapped lines joined, and its lines.
func shortText(short string, names string) (text string, lines []string, ok bool) {
	const col = 2 + 34 + 1
	ls := strings.Split(short, "\n")
	for i, l := range ls {
		first := ""
		switch {
		case l == "  "+names && i+1 < len(ls) && strings.HasPrefix(ls[i+1], strings.Repeat(" ", col)):
			i++
			first = ls[i]
		case len(names) <= 34 && strings.HasPrefix(l, fmt.Sprintf("  %-34s ", names)):
			first = l
		default:
			continue
		}
		lines = append(lines, first)
		text = strings.TrimSpace(first[col:])
		for _, c := range ls[i+1:] {
			if !strings.HasPrefix(c, strings.Repeat(" ", col)) {
				break
			}
			lines = append(lines, c)
			text += " " + strings.TrimSpace(c)
		}
		return text, lines, true
	}
	return "", nil, false
}

// TestProfileShortHelpValuesAndDefaults: -h gives every flag's first clause whole, so a
// list of the values a flag takes is never cut, and its default (the one its usage
// states, else its own when not the zero value); it wraps instead of cutting lines.
func TestProfileShortHelpValuesAndDefaults(t *testing.T) {
	_, short, _ := cli(t, "profile", "-h")
	got := map[string]string{}
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	registerProfileFlags(fs, &profileFlags{}, &profileOpts{})
	for _, en := range flagEntries(fs) {
		text, lines, ok := shortText(short, en.names())
		if !ok {
			t.Errorf("-h does not list %s", en.names())
			continue
		}
		got[en.names()] = text
		for _, l := range lines {
			if len([]rune(l)) > shortWidth {
				t.Errorf("-h line wider than %d: %q", shortWidth, l)
			}
		}
		if text != en.short() {
			t.Errorf("-h shows %s as %q, want %q", en.names(), text, en.short())
		}
		if !strings.HasPrefix(text, firstClause(en.text)) {
			t.Errorf("-h cuts %s's first clause: %q", en.names(), text)
		}
		if m := statedDefault.FindStringSubmatch(en.text); m != nil && !strings.Contains(text, "default") {
			t.Errorf("-h shows %s without the default its usage states (%s): %q", en.names(), m[1], text)
		}
		if !zeroDefault(en.f.DefValue) && !strings.Contains(text, "default") {
			t.Errorf("-h shows %s without its default %s: %q", en.names(), en.f.DefValue, text)
		}
	}
	for names, want := range map[string][]string{
		"--endpoint-type":                       append(slices.Clone(loadgen.Endpoints), "(default chat)"),
		"--url-strategy":                        {"round_robin or least_outstanding (default round_robin)"},
		"--check-client-bound":                  {"fail, warn or off (default warn)"},
		"--streaming":                           {"(default true)"},
		"--tokenizer":                           {"hub id (default gpt2)"},
		"--alpha":                               {"(default 0.01)"},
		"--audio-depths":                        {"only 16 is made"},
		"--audio-sample-rates":                  {"(default 16)"},
		"--idle-timeout-seconds":                {"(0 = none)", "(default 60)"},
		"--model-weights":                       {"e.g. 3,1"},
		"--shard-index":                         {"(default: $JOB_COMPLETION_INDEX"},
		"--custom-dataset-type, --input-format": {"payloads, mooncake, sharegpt, recording or agent_trace (mooncake_trace = mooncake)"},
	} {
		for _, w := range want {
			if !strings.Contains(got[names], w) {
				t.Errorf("-h shows %s as %q, want it to say %q", names, got[names], w)
			}
		}
	}
}

// TestHelpCommand: perfgate help CMD is CMD -h for every command (and history's
// subcommands); a mistyped one is refused with the nearest name.
func TestHelpCommand(t *testing.T) {
	firstLine := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	for _, c := range commands() {
		code, got, errOut := cli(t, "help", c.name)
		_, want, _ := cli(t, c.name, "-h")
		if code != ExitOK || got != want || got == "" {
			t.Errorf("help %s: exit %d, stdout %q (stderr %q); want exit 0 and what %s -h prints, %q",
				c.name, code, firstLine(got), errOut, c.name, firstLine(want))
		}
	}
	_, top, _ := cli(t, "help")
	for _, args := range [][]string{{"help", "help"}, {"--help", "-h"}} {
		if code, got, _ := cli(t, args...); code != ExitOK || got != top {
			t.Errorf("%v: exit %d, want the top-level help", args, code)
		}
	}
	code, got, _ := cli(t, "help", "history", "list")
	if _, want, _ := cli(t, "history", "list", "-h"); code != ExitOK || got != want || !strings.HasPrefix(got, "Usage: perfgate history list") {
		t.Errorf("help history list: exit %d, %q; want history list -h", code, firstLine(got))
	}
	if code, got, _ := cli(t, "history", "help", "show"); code != ExitOK || !strings.HasPrefix(got, "Usage: perfgate history show") {
		t.Errorf("history help show: exit %d, %q; want history show -h", code, firstLine(got))
	}
	if code, _, errOut := cli(t, "help", "profiel"); code != ExitInvalidConfig || !strings.Contains(errOut, `unknown command "profiel" (did you mean profile?)`) {
		t.Errorf("help profiel: exit %d, %q; want exit %d and a did-you-mean", code, errOut, ExitInvalidConfig)
	}
}
