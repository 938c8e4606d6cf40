package tokenizer

import (
	"slices"
	"testing"
)

const (
	patLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

func splitAll(sp patternSplitter, s string) []string {
	var out []string
	sp.split(s, func(p string) { out = append(out, p) })
	return out
}

func TestRegexpSplitter(t *testing.T) {
	tests := []struct {
		pat, in string
		want    []string
	}{
		{patLlama3, "Hello world's  12345 ok!!\n\n  x", []string{"Hello", " world", "'s", " ", " ", "123", "45", " ok", "!!\n\n", " ", " x"}},
		{patLlama3, "I'ſ HE'LL", []string{"I", "'ſ", " HE", "'LL"}},
		{patGPT2, "Hello  world 123", []string{"Hello", " ", " world", " 123"}},
		{patGPT2, "a\xffb", []string{"a", "\xff", "b"}},
		{patLlama3, "", nil},
	}
	for _, tt := range tests {
		sp, err := newRegexpSplitter(tt.pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := splitAll(sp, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("split(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if _, err := newPatternSplitter(`(`); err == nil {
		t.Errorf("newPatternSplitter(%q) = nil error, want an error", `(`)
	}
}
