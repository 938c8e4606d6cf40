package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/testutil"
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

// knownPatternList is every hand-written pattern, for the equivalence tests.
func knownPatternList() []string {
	var ps []string
	for p := range knownPatterns {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

type offsetPair struct{ a, b int }

func matchOffsets(m matcher, s string) []offsetPair {
	var out []offsetPair
	m.matches(s, func(a, b int) { out = append(out, offsetPair{a, b}) })
	return out
}

// splitterInputs is the corpus plus strings built from characters of every class.
func splitterInputs(n int) []string {
	g := newCorpusGen(42, []string{"<|endoftext|>", "<s>"})
	in := g.corpus(n, 1, 20_000)
	r := rand.New(rand.NewPCG(5, 5))
	alphabet := []string{" ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "a", "Z", "é", "ǅ", "ʰ", "中", "の",
		"カ", "\u0301", "\u0903", "1", "٣", "Ⅻ", "½", "'", "'s", "'S", "'ll", "'LL", "'ſ", "'ve", "'Re", "!", "\"", "-", "/",
		"_", "$", "€", "😀", "\u200d", "\x00", "\x1b", "\u0085", "\u061d", "\U000137bd", "\xff", "\xe2\x82", "。", "ー",
		"ꙮ", "ᾈ", "Σ"}
	for range n {
		var b strings.Builder
		for k := 1 + r.IntN(12); k > 0; k-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		in = append(in, b.String())
	}
	return in
}

func TestKnownSplittersMatchRegexp(t *testing.T) {
	n := 3000
	if testutil.Short() {
		n = 500
	}
	inputs := splitterInputs(n)
	for _, p := range knownPatternList() {
		t.Run(fmt.Sprintf("%.40s", p), func(t *testing.T) {
			fast := knownSplitter(p).(matcher)
			ref, err := newRegexpSplitter(p)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, s := range inputs {
				got, want := matchOffsets(fast, s), matchOffsets(ref, s)
				if !slices.Equal(got, want) {
					bad++
					if bad <= 5 {
						t.Errorf("matches(%q):\n got  %v\n want %v", s, pieces(s, got), pieces(s, want))
					}
				}
			}
		})
	}
}

func pieces(s string, offs []offsetPair) []string {
	var out []string
	for _, o := range offs {
		out = append(out, s[o.a:o.b])
	}
	return out
}

// FuzzKnownSplitters checks every hand-written matcher against regexp2 on arbitrary input.
func FuzzKnownSplitters(f *testing.F) {
	for _, s := range splitterInputs(50) {
		f.Add(s)
	}
	type pair struct {
		fast matcher
		ref  *regexpSplitter
	}
	var ps []pair
	for _, p := range knownPatternList() {
		ref, err := newRegexpSplitter(p)
		if err != nil {
			f.Fatal(err)
		}
		ps = append(ps, pair{knownSplitter(p).(matcher), ref})
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = toValidUTF8(s)
		}
		for _, p := range ps {
			got, want := matchOffsets(p.fast, s), matchOffsets(p.ref, s)
			if !slices.Equal(got, want) {
				t.Fatalf("pattern %q: matches(%q):\n got  %v\n want %v", p.ref.re.String(), s, pieces(s, got), pieces(s, want))
			}
		}
	})
}
