package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/testutil"
)

// TestBuiltinUnicodeTables checks the split patterns' character classes (\p{L}, \p{N},
// \p{Lu}…, \p{M}, \s) on every code point of planes 0, 1 and 14 (and every 16th of
// planes 2 and 3), against tiktoken: each
// code point appears next to a letter, a digit, a space and itself, so that a class that
// differs between our tables and tiktoken's (Rust regex crate) changes the split.
func TestBuiltinUnicodeTables(t *testing.T) {
	if testutil.Short() {
		t.Skip("covers every code point; run without -short")
	}
	var texts []string
	var b strings.Builder
	add := func(c rune) {
		s := string(c)
		b.WriteString(s + "a" + s + " " + s + "1" + s + "A'" + s + "\n")
		if b.Len() > 64<<10 {
			texts = append(texts, b.String())
			b.Reset()
		}
	}
	for c := rune(0); c < 0x40000; c++ {
		// Planes 2 and 3 are CJK ideographs (Lo) and unassigned code points in large
		// blocks: every 16th code point finds a block our tables place differently.
		if utf8.ValidRune(c) && (c < 0x20000 || c%16 == 0) {
			add(c)
		}
	}
	for c := rune(0xE0000); c < 0xE0200; c++ {
		add(c)
	}
	texts = append(texts, b.String())
	// cl100k_base's classes (\p{L}, \p{N}, \s) are a subset of o200k_base's.
	for _, name := range []string{"gpt2", "o200k_base"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tok, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			want := ttOracle(t, ttOracleReq{Encoding: name, Texts: texts})
			bad := 0
			for i, s := range texts {
				got := tok.Encode(s, false)
				if slices.Equal(got, want.IDs[i]) {
					continue
				}
				// Narrow down to the first differing line.
				for _, line := range strings.SplitAfter(s, "\n") {
					if g, w := tok.Encode(line, false), ttOracle(t, ttOracleReq{Encoding: name, Texts: []string{line}}).IDs[0]; !slices.Equal(g, w) {
						t.Errorf("Encode(%+q) = %v, want %v", line, g, w)
						break
					}
				}
				if bad++; bad >= 3 {
					t.FailNow()
				}
			}
		})
	}
}
