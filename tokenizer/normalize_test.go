package tokenizer

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/perfgate/perfgate/internal/testutil"
)

// TestNormalizationMatchesOracle runs every combining mark Go knows through NFD, NFC,
// NFKC and NFKD next to other marks, plus long mark runs, against Hugging Face: Go's
// newer Unicode gives some marks a combining class HF's tables lack (hfStarters), and Go
// inserts U+034F into runs of more than 30 marks.
func TestNormalizationMatchesOracle(t *testing.T) {
	var texts []string
	for r := rune(0x300); r < 0x20000; r++ {
		if norm.NFD.PropertiesString(string(r)).CCC() != 0 {
			m := string(r)
			texts = append(texts, "a"+m+"\u0316"+m+"\u0301", "e\u0301"+m+"\u0316b\u0316\u0301"+m)
		}
	}
	for _, tab := range []*unicode.RangeTable{hfKeepCanonical, hfKeepCompat} {
		for _, r := range tab.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c++ {
				texts = append(texts, "a"+string(c)+"\u0301b")
			}
		}
		for _, r := range tab.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi); c++ {
				texts = append(texts, "a"+string(c)+"\u0301b")
			}
		}
	}
	texts = append(texts, "\U00011935\U00011930", "x"+strings.Repeat("\u0301", 40), "e"+strings.Repeat("\u0316\u0301", 40), "\u1100\u1161\u11a8 한글",
		"A"+strings.Repeat("\u0316", 31)+"\u030a", "ﬁ ① Å Ω ｱ")
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := testutil.Node(t, filepath.Join("testdata", "oracle", "normalize.js"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("normalize.js: %v", err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for k, f := range []norm.Form{norm.NFD, norm.NFC, norm.NFKC, norm.NFKD} {
		for i, s := range texts {
			if got := normString(f, s); got != want[k][i] {
				if bad++; bad <= 8 {
					t.Errorf("normString(%v, %+q) = %+q, want %+q", f, s, got, want[k][i])
				}
			}
		}
	}
}
