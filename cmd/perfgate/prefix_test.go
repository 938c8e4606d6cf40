package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

// The prefix-cache flags set their fields, AIPerf's aliases alike.
func TestPrefixFlags(t *testing.T) {
	sc := scenarioOf(t, "--num-prefix-prompts", "100", "--prompt-prefix-length", "40", "--prefix-popularity", "zipf:1.2",
		"--user-context-prompt-length", "8", "--kv-block-size", "32", "--prime-prefixes", "--prime-concurrency", "4", "--reset-kv-cache", "--isl", "200", "--kv-cache-blocks", "5000")
	if sc.NumPrefixPrompts != 100 || sc.PromptPrefixLength != 40 || sc.PrefixPopularity.Zipf != 1.2 || sc.UserContextPromptLength != 8 ||
		sc.KVBlockSize != 32 || !sc.PrimePrefixes || sc.PrimeConcurrency != 4 || !sc.Validity.ResetKVCache || sc.KVCacheBlocks != 5000 {
		t.Errorf("scenario %s", asJSON(t, sc))
	}
	a := asJSON(t, scenarioOf(t, "--prompt-prefix-pool-size", "3", "--prefix-prompt-length", "5"))
	b := asJSON(t, scenarioOf(t, "--num-prefix-prompts", "3", "--prompt-prefix-length", "5"))
	if a != b {
		t.Errorf("AIPerf's aliases differ:\n%s\n%s", a, b)
	}
	bs := scenarioOf(t, "--prefix-buckets", "20x4:0.7,10x2:0.3").PrefixBuckets
	if bs.String() != (dataset.PrefixBuckets{{Tokens: 20, Count: 4, Weight: 0.7}, {Tokens: 10, Count: 2, Weight: 0.3}}).String() {
		t.Errorf("--prefix-buckets = %v", bs)
	}
}

// Bad prefix-cache flags are invalid configuration (exit 2), naming the flag.
func TestPrefixFlagsInvalid(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-prefix-prompts", "0", "--prompt-prefix-length", "5"}, "--num-prefix-prompts 0"},
		{[]string{"--prompt-prefix-length", "500", "--isl", "100"}, "prefix length 500"},
		{[]string{"--kv-block-size", "0"}, "--kv-block-size"},
		{[]string{"--kv-block-size", "1025"}, "--kv-block-size"},
		{[]string{"--prefix-popularity", "zipf:0"}, "--prefix-popularity"},
		{[]string{"--prefix-popularity", "zipf:-2"}, "--prefix-popularity"},
		{[]string{"--prefix-buckets", "10x2:0,5x1:0"}, "--prefix-buckets"},
		{[]string{"--prime-prefixes"}, "nothing to prime"},
		{[]string{"--kv-cache-blocks", "-1"}, "--kv-cache-blocks"},
	} {
		var f profileFlags
		var o profileOpts
		fs := flag.NewFlagSet("profile", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		registerProfileFlags(fs, &f, &o)
		if err := fs.Parse(append([]string{"--mock"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		sc, err := buildScenario(fs, &f, &o)
		if err == nil {
			err = sc.Validate()
			if err != nil {
				err = invalid(err)
			}
		}
		var ee *exitError
		if err == nil || !errors.As(err, &ee) || ee.code != ExitInvalidConfig || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want exit %d naming %q", c.args, err, ExitInvalidConfig, c.want)
		}
	}
}
