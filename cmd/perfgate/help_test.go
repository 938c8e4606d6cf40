package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
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
	// Short: one line a flag; full: the defaults and whole descriptions.
	if !strings.Contains(short, "--search-tolerance                 relative tolerance of the search\n") {
		t.Error("-h lacks the one-line form of --search-tolerance")
	}
	for _, want := range []string{"--search-tolerance\n      relative tolerance of the search (default 0.05)", "-u, --url\n", "(repeatable: several servers, see --url-strategy; or --mock)"} {
		if !strings.Contains(full, want) {
			t.Errorf("--help-all lacks %q", want)
		}
	}
	if len(full) < len(short) {
		t.Error("--help-all is shorter than -h")
	}
}
