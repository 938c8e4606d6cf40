package scenario

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/validity"
)

// The prefix-cache fields are read from a file, and a bad value is reported at its
// FILE:LINE, naming the field.
func TestPrefixFileFields(t *testing.T) {
	good := "name: p\nisl: fixed:300\nnum_prefix_prompts: 50\nprompt_prefix_length: 100\nprefix_popularity: zipf:0.8\nuser_context_prompt_length: 20\nkv_block_size: 32\nprime_prefixes: true\nprime_concurrency: 4\nvalidity:\n  reset_kv_cache: true\n"
	sc, err := decodeFile("p.yaml", []byte(good), true)
	if err != nil || sc.NumPrefixPrompts != 50 || sc.PrefixPopularity.Zipf != 0.8 || sc.KVBlockSize != 32 || !sc.PrimePrefixes || !sc.Validity.ResetKVCache {
		t.Fatalf("good file: %+v, %v", sc.Prefixes, err)
	}
	if err := sc.Validate(); err != nil {
		t.Errorf("good file: Validate = %v", err)
	}
	b, err := decodeFile("b.yaml", []byte("name: b\nprefix_buckets:\n  - {prefix_tokens: 20, prefix_count: 3, bucket_weight: 2}\n"), true)
	if err != nil || b.PrefixBuckets.Size() != 3 {
		t.Fatalf("buckets: %v, %v", b.PrefixBuckets, err)
	}
	for _, c := range []struct{ file, want string }{
		{"name: x\nnum_prefix_prompts: 0\n", "x.yaml:2:21: num_prefix_prompts: 0: want a pool"},
		{"name: x\nprefix_popularity: zipf:0\n", "x.yaml:2:20: prefix_popularity"},
		{"name: x\nkv_block_size: 0\n", "x.yaml:2:16: kv_block_size: invalid block size 0"},
		{"name: x\nkv_block_size: 4096\n", "x.yaml:2:16: kv_block_size"},
		{"name: x\nprefix_buckets:\n  - {prefix_tokens: 2, prefix_count: 0, bucket_weight: 1}\n", "x.yaml:3:3: prefix_buckets: prefix buckets: bucket 1: prefix_count 0"},
		{"name: x\nprefix_buckets:\n  - {prefix_tokens: 2, prefix_count: 1, bucket_weight: 0}\n", "x.yaml:3:3: prefix_buckets: prefix buckets: the bucket weights add up to 0"},
	} {
		_, err := decodeFile("x.yaml", []byte(c.file), true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.file, err, c.want)
		}
	}
}

// --reset-kv-cache posts to each target's /reset_prefix_cache; a reset_url wins.
func TestResetURLs(t *testing.T) {
	got := resetURLs(validity.Config{ResetKVCache: true}, []string{"http://a:8000/v1", "https://b/v1/chat/completions"})
	if strings.Join(got, " ") != "http://a:8000/reset_prefix_cache https://b/reset_prefix_cache" {
		t.Errorf("resetURLs = %v", got)
	}
	if got := resetURLs(validity.Config{ResetKVCache: true, ResetURL: "http://x/r"}, []string{"http://a"}); len(got) != 1 || got[0] != "http://x/r" {
		t.Errorf("with reset_url: %v", got)
	}
	if got := resetURLs(validity.Config{}, []string{"http://a"}); got != nil {
		t.Errorf("neither: %v", got)
	}
}
