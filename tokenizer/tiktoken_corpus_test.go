package tokenizer

import (
	"math/rand/v2"
	"strings"
)

// ttCorpus returns n test strings drawn by a seeded generator: prose, code, digit runs,
// whitespace and newline runs, contractions in both cases, accents (composed and
// combining), CJK, emoji with ZWJ and modifiers, RTL scripts, control characters, Unicode
// spaces, invalid UTF-8, text that spells special tokens (whole, partial, adjacent), and a
// few long documents. The same seed gives the same corpus.
func ttCorpus(seed uint64, n int, specials []string) []string {
	r := rand.New(rand.NewPCG(seed, 0x7e57))
	words := []string{
		"the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "Hello", "world",
		"tokenizer", "benchmark", "latency", "throughput", "I", "A", "OpenAI", "GPT",
		"naïve", "café", "résumé", "Straße", "Ünïcödé", "ΑΒΓ", "δέλτα", "Привет", "мир",
		"日本語", "中文", "한국어", "テキスト", "ไทย", "हिन्दी", "العربية", "עברית",
		"don't", "I'm", "we'll", "they've", "she'd", "it's", "YOU'RE", "WE'LL", "IT'S", "O'Neil",
		"😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇺🇸", "e\u0301", "n\u0303", "A\u030a",
		"x86_64", "foo.bar()", "if(x){y=1;}", "<div>", "</div>", "#include", "λx.x", "∀x∈ℝ",
		"1", "12", "123", "1234", "12345678901234567890", "3.14159", "1,000,000", "٣٤٥", "½", "²",
		"\t", "\n", "\r\n", "  ", "    ", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", "\ufeff",
		"https://example.com/a?b=c&d=e", "user@example.com", "$HOME", "C:\\Windows", "/usr/bin",
		"...", "!!!", "???", "—", "–", "“quoted”", "‘single’", "«guillemets»", "(", ")", "[", "]",
		"\x00", "\x01", "\x1b[0m", "\x7f", "\u0080", "\u009f",
	}
	code := []string{
		"func main() {\n\tfmt.Println(\"hi\")\n}\n",
		"def f(x):\n    return x ** 2  # square\n\n",
		"for (int i = 0; i < n; ++i) {\n        sum += a[i];\n    }\n",
		"SELECT id, name FROM users WHERE age >= 18;\n",
		"{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
		"    \n\n\t\t  \n",
		"<|im_start|>user\nhi<|im_end|>\n",
	}
	special := func() string {
		if len(specials) == 0 {
			return "<|endoftext|>"
		}
		s := specials[r.IntN(len(specials))]
		switch r.IntN(4) {
		case 0:
			return s[:r.IntN(len(s))] // partial
		case 1:
			return s + s
		}
		return s
	}
	piece := func() string {
		switch k := r.IntN(20); {
		case k < 9:
			return words[r.IntN(len(words))]
		case k < 11:
			return code[r.IntN(len(code))]
		case k < 12:
			return strings.Repeat(" ", 1+r.IntN(20))
		case k < 13:
			return strings.Repeat("\n", 1+r.IntN(5))
		case k < 14:
			var b strings.Builder
			for range 1 + r.IntN(30) {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			return b.String()
		case k < 15:
			return special()
		case k < 16:
			return string(rune(r.IntN(0x3000)))
		case k < 17:
			// any valid code point, including astral ones
			c := rune(r.IntN(0x10FFFF))
			if c >= 0xD800 && c < 0xE000 {
				c = 'x'
			}
			return string(c)
		case k < 18:
			// invalid UTF-8: stray continuation bytes, truncated sequences, overlongs
			bad := []string{"\x80", "\xbf", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xc0\xaf", "\xed\xa0\x80", "\xff", "\xf4\x90\x80\x80"}
			return bad[r.IntN(len(bad))]
		default:
			return strings.ToUpper(words[r.IntN(len(words))])
		}
	}
	out := make([]string, 0, n)
	out = append(out, "", " ", "a", "\n", "  \n  ", "Hello world", "<|endoftext|>", "<|endoftext|><|endoftext|>",
		strings.Repeat("a", 5000), strings.Repeat(" ", 3000), strings.Repeat("1234567890", 300),
		strings.Repeat("😀", 500), strings.Repeat("ab", 2000))
	for len(out) < n {
		var b strings.Builder
		m := 1 + r.IntN(12)
		if r.IntN(100) == 0 {
			m = 2000 + r.IntN(3000) // a long document
		}
		for range m {
			b.WriteString(piece())
			if r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		out = append(out, b.String())
	}
	return out
}
