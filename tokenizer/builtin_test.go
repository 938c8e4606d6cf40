package tokenizer

import (
	"slices"
	"testing"
)

func TestBuiltinGPT2Basics(t *testing.T) {
	tok, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.VocabSize(), 50257; got != want {
		t.Errorf("VocabSize() = %d, want %d", got, want)
	}
	if got, want := tok.Encode("Hello world<|endoftext|>", false), []int{15496, 995, 50256}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got := tok.Decode([]int{15496, 995, 50256}, false); got != "Hello world<|endoftext|>" {
		t.Errorf("Decode = %q", got)
	}
	if got, ok := tok.IDToToken(995); !ok || got != "Ġworld" {
		t.Errorf("IDToToken(995) = %q, %v, want Ġworld", got, ok)
	}
}
