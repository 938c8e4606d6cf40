package scenario

import (
	"strings"
	"testing"
)

// The prefix-cache fields are read from a file, and a bad value is reported at its
// FILE:LINE, naming the field.
func TestPrefixFileFields(t *testing.T) {
	good := "name: p\nisl: fixed:300\nnum_prefix_prompts: 50\nprompt_prefix_length: 100\nprefix_popularity: zipf:0.8\nuser_context_prompt_length: 20\nkv_block_size: 32\nprime_prefixes: true\nprime_concurrency: 4\nvalidity:\n  reset_kv_cache: true\n"
	sc, err := DecodeFile("p.yaml", []byte(good), true)
	if err != nil || sc.NumPrefixPrompts != 50 || sc.PrefixPopularity.Zipf != 0.8 || sc.KVBlockSize != 32 || !sc.PrimePrefixes || !sc.Validity.ResetKVCache {
		t.Fatalf("good file: %+v, %v", sc.Prefixes, err)
	}
	if err := sc.Validate(); err != nil {
		t.Errorf("good file: Validate = %v", err)
	}
	b, err := DecodeFile("b.yaml", []byte("name: b\nprefix_buckets:\n  - {prefix_tokens: 20, prefix_count: 3, bucket_weight: 2}\n"), true)
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
		_, err := DecodeFile("x.yaml", []byte(c.file), true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.file, err, c.want)
		}
	}
}

// The rules read from a scenario file, kv_cache_blocks with them; a negative capacity
// is refused at its FILE:LINE.
func TestPrefixCacheRulesInFile(t *testing.T) {
	src := "name: p\nisl: fixed:200\nnum_prefix_prompts: 10\nprompt_prefix_length: 64\nkv_cache_blocks: 4096\nobjectives:\n  rules: [\"prefix_cache_gap<=0.02\", \"prefix_cache_hit_rate>=60%\"]\n"
	sc, err := DecodeFile("p.yaml", []byte(src), true)
	if err != nil || sc.KVCacheBlocks != 4096 {
		t.Fatalf("decode: kv_cache_blocks %d, %v", sc.KVCacheBlocks, err)
	}
	if err := sc.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if _, err := DecodeFile("x.yaml", []byte("name: x\nkv_cache_blocks: -2\n"), true); err == nil || !strings.Contains(err.Error(), "x.yaml:2:18: kv_cache_blocks") {
		t.Errorf("kv_cache_blocks -2: %v; want an error at x.yaml:2:18", err)
	}
	bad := Scenario{Objectives: Objectives{Rules: []string{"prefix_cache_gap<=2"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "prefix_cache_gap") {
		t.Errorf("rule prefix_cache_gap<=2: Validate = %v, want an error naming it", err)
	}
}
