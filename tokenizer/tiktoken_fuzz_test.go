package tokenizer

import (
	"slices"
	"testing"
)

// FuzzBuiltinEncode checks invariants of the tiktoken encoder on any input: decoding the
// ids gives back the (lossily converted) text, the heap merge for long pieces agrees with
// tiktoken's quadratic loop, and Count agrees with Encode. The differential test against
// tiktoken itself is TestBuiltinMatchesTiktoken; its corpus generator seeds this fuzzer.
func FuzzBuiltinEncode(f *testing.F) {
	for _, s := range ttCorpus(99, 60, []string{"<|endoftext|>", "<|endofprompt|>"}) {
		if len(s) < 2000 {
			f.Add(s)
		}
	}
	toks := map[string]*tiktokenBackend{}
	for _, name := range []string{"gpt2", "o200k_base"} {
		tok, err := Builtin(name)
		if err != nil {
			f.Fatal(err)
		}
		toks[name] = tok.b.(*tiktokenBackend)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, b := range toks {
			ids := b.encode(s, false)
			if got, want := b.decode(ids, false), toValidUTF8(s); got != want {
				t.Fatalf("%s: Decode(Encode(%q)) = %q", name, s, got)
			}
			// (A piece that is itself a token is looked up whole, as tiktoken does, before
			// any merging; compare the merge loops only below that shortcut.)
			if _, whole := b.ranks[s]; !whole && len(s) <= 64 && !slices.Equal(b.mergeShort(nil, s), b.mergeLong(nil, s)) {
				t.Fatalf("%s: mergeLong(%q) = %v, want %v", name, s, b.mergeLong(nil, s), b.mergeShort(nil, s))
			}
		}
	})
}
