package tokenizer

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// corpusGen generates the deterministic differential-test corpus: short strings that
// each mix a few fragments of the kinds of text that break tokenizers.
type corpusGen struct {
	r        *rand.Rand
	specials []string // added-token strings of the tokenizer under test
}

func newCorpusGen(seed uint64, specials []string) *corpusGen {
	return &corpusGen{r: rand.New(rand.NewPCG(seed, 0x70c3)), specials: specials}
}

var (
	corpusWords = strings.Fields(`the of and to in is was for that on with as by at from it an be this which or
		are have not had but were they all one their been has there more when will would who so
		Hello World Tokenizer OpenAI LLaMA Qwen DeepSeek Gemma BERT HTTP JSON API GPU CUDA iPhone
		naïve café résumé façade über straße coöperate jalapeño São Paulo Zürich Ångström
		quickly jumped lazy dog fox running tokenization internationalization antidisestablishment`)
	corpusContractions = []string{"don't", "I'm", "we've", "they're", "it's", "she'll", "he'd", "can't",
		"DON'T", "I'M", "WE'VE", "THEY'RE", "IT'S", "SHE'LL", "HE'D", "'s", "'S", "'t", "'re", "'ve",
		"'m", "'ll", "'d", "'ſ", "’s", "y'all", "rock'n'roll", "O'Neil"}
	corpusCode = []string{
		"func main() {\n\tfmt.Println(\"hi\")\n}\n",
		"def f(x):\n    return x**2 + 1  # square\n",
		"for (int i = 0; i < n; ++i) { sum += a[i]; }",
		"if err != nil {\n\t\treturn nil, fmt.Errorf(\"x: %w\", err)\n\t}",
		"SELECT id, name FROM users WHERE age >= 21 ORDER BY name;",
		"<div class=\"row\"><span>&nbsp;</span></div>",
		"x := map[string]int{\"a\": 1, \"b\": 2}",
		"    \n\t\t// comment\r\n",
		"#!/bin/sh\nset -eu\necho \"$HOME\" | tr a-z A-Z\n",
		"{\"key\": [1, 2.5, -3e10, true, null]}",
		"a+=b; c-=d; e*=f; g/=h; i%=j; k<<=1; l>>=2; m&&n||o",
		"https://example.com/path?q=1&r=2#frag",
		"@decorator\nclass Foo(Bar):\n\tpass",
	}
	corpusAccents = []string{"é", "e\u0301", "Å", "\u212B", "A\u030A", "ñ", "n\u0303", "ǅ", "ﬁ", "ẞ",
		"İstanbul", "ǰ", "ΐ", "Ω", "\u2126", "ﾊﾟ", "①", "²", "½", "Ⅻ", "㎏", "ｆｕｌｌｗｉｄｔｈ", "ΣΑΣ", "ς",
		// Zalgo: more than 30 mixed combining marks (Go's norm would insert U+034F)
		"Z\u0335\u0321\u0322\u0327\u0328\u031b\u0316\u0317\u0318\u0319\u031c\u031d\u031e\u031f\u0320\u0323\u0324\u0325\u0326\u0329\u032a\u032b\u032c\u032d\u032e\u032f\u0330\u0331\u0332\u0333\u0339\u033a\u033b\u033c\u0347\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030d\u030e\u030f\u0310\u0311\u0312\u0313\u0314\u033d\u033e\u033f\u0340\u0341\u0342\u0343\u0344\u0346\u034a\u034b\u034c\u0315\u031a\u0345algo"}
	corpusCJK = []string{"你好，世界！", "漢字かなカナ", "日本語のテキストです。", "한국어 텍스트", "中文句子里有标点。",
		"ひらがな", "カタカナー", "繁體中文測試", "𠀀𠀁", "〇一二三", "ｱｲｳ", "韓国語：안녕하세요"}
	corpusEmoji = []string{"😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇺🇸🇫🇷", "❤️", "🧑‍💻", "✈︎", "🫠", "🥰",
		"1️⃣", "👩🏿‍🔬", "🐈‍⬛", "☺", "⌚"}
	corpusRTL = []string{"مرحبا بالعالم", "שלום עולם", "العربية ١٢٣٤٥", "\u200fRTL mark", "\u061c\u061d\u061e",
		"فارسی ۱۲۳", "ܐܪܡܝܐ", "ދިވެހި", "\u202eoverride\u202c"}
	corpusControl = []string{"\x00", "\x01", "\x07", "\x1b[31m", "\x7f", "\u0085", "\u200b", "\ufeff",
		"\u2028", "\u2029", "\u00a0", "\u3000", "\u2003", "\u180e", "\u200d", "\u00ad", "\ufffd", "\U000E0001"}
	corpusInvalid = []string{"\xff", "\xfe\xfe", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80",
		"\xc0\xaf", "\xf8\x88\x80\x80\x80", "\x80\x80", "a\xffb", "\xf4\x90\x80\x80", "\xe0\x80\x80"}
	corpusSeps = []string{" ", "  ", "\n", "\n\n", "\t", " \n", "\r\n", "", "   ", ". ", ", ", "\n\n\n  "}
)

func (g *corpusGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *corpusGen) prose() string {
	n := 1 + g.r.IntN(12)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(g.pick([]string{" ", " ", " ", ", ", ". ", "; ", " - ", "! ", "? "}))
		}
		w := g.pick(corpusWords)
		switch g.r.IntN(6) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			_, n := utf8.DecodeRuneInString(w)
			w = strings.ToUpper(w[:n]) + w[n:]
		}
		b.WriteString(w)
	}
	return b.String()
}

func (g *corpusGen) digits() string {
	switch g.r.IntN(5) {
	case 0:
		n := 1 + g.r.IntN(40)
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + g.r.IntN(10)))
		}
		return b.String()
	case 1:
		return strings.Repeat("9", 1+g.r.IntN(9)) + "." + strings.Repeat("5", g.r.IntN(6))
	case 2:
		return "1,234,567.89"
	case 3:
		return "3.14159e-10 0x1F 0b1010 1_000_000"
	}
	return "v" + string(rune('0'+g.r.IntN(10))) + "." + string(rune('0'+g.r.IntN(10))) + " ٣٤ ۵۶ ४२ ௫"
}

func (g *corpusGen) spaces() string {
	var b strings.Builder
	n := 1 + g.r.IntN(8)
	for range n {
		b.WriteString(g.pick([]string{" ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\v", "\f"}))
	}
	return b.String()
}

func (g *corpusGen) randomRunes() string {
	n := 1 + g.r.IntN(10)
	var b strings.Builder
	for range n {
		var r rune
		switch g.r.IntN(5) {
		case 0:
			r = rune(0x20 + g.r.IntN(0x60))
		case 1:
			r = rune(0xA0 + g.r.IntN(0x2000))
		case 2:
			r = rune(0x2000 + g.r.IntN(0xE000))
		case 3:
			r = rune(0x10000 + g.r.IntN(0x20000))
		default:
			r = rune(g.r.IntN(0x110000))
		}
		if !utf8.ValidRune(r) {
			r = 0xFFFD
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (g *corpusGen) special() string {
	if len(g.specials) == 0 {
		return "<|endoftext|>"
	}
	s := g.pick(g.specials)
	switch g.r.IntN(6) {
	case 0:
		return " " + s + " "
	case 1:
		if len(s) > 2 {
			return s[:len(s)/2] // a prefix of a special token
		}
	case 2:
		return s + s
	case 3:
		return strings.ToUpper(s)
	}
	return s
}

func (g *corpusGen) fragment() string {
	switch g.r.IntN(14) {
	case 0, 1, 2:
		return g.prose()
	case 3:
		return g.pick(corpusCode)
	case 4:
		return g.digits()
	case 5:
		return g.spaces()
	case 6:
		return g.pick(corpusContractions)
	case 7:
		return g.pick(corpusAccents)
	case 8:
		return g.pick(corpusCJK)
	case 9:
		return g.pick(corpusEmoji)
	case 10:
		return g.pick(corpusRTL)
	case 11:
		return g.pick(corpusControl)
	case 12:
		if g.r.IntN(2) == 0 {
			return g.pick(corpusInvalid)
		}
		return g.randomRunes()
	}
	return g.special()
}

// text returns one corpus string of 1-8 fragments.
func (g *corpusGen) text() string {
	n := 1 + g.r.IntN(8)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(g.pick(corpusSeps))
		}
		b.WriteString(g.fragment())
	}
	return b.String()
}

// doc returns a long document of about n bytes.
func (g *corpusGen) doc(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(g.text())
		b.WriteString(g.pick([]string{"\n", "\n\n", " ", ". "}))
	}
	return b.String()
}

// corpus returns n strings plus a few long documents of docBytes each. The first strings
// are fixed edge cases.
func (g *corpusGen) corpus(n, docs, docBytes int) []string {
	out := []string{"", " ", "  ", "\n", " \n ", "a", "A", "'s", "'ſ", "Hello world", " Hello", "Hello ",
		"\xff", "\xe2\x82", "😀", "👨‍👩‍👧‍👦", "1234567", "   leading", "trailing   ", "\t\t\n\n",
		"\u061d", "a\u0301", "ǅ", "İ", "ﬁ"}
	out = append(out, g.specials...)
	for _, s := range g.specials {
		out = append(out, "x"+s+"y", " "+s+" ", s+"\n"+s)
	}
	for len(out) < n {
		out = append(out, g.text())
	}
	for range docs {
		out = append(out, g.doc(docBytes))
	}
	return out
}
