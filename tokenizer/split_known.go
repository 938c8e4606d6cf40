package tokenizer

import "unicode/utf8"

// Hand-written matchers for the split patterns real tokenizers use. Each gives exactly the
// matches of the regex (Oniguruma semantics, Hugging Face's Unicode tables) — proven
// against the regexp2 version by TestKnownSplittersMatchRegexp and FuzzKnownSplitters — at
// a fraction of the cost.

const (
	// patGPT2 is GPT-2's pattern (ByteLevel's use_regex, tiktoken r50k/p50k).
	patGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// patLlama3 is Llama-3's (and, as tiktoken writes it, cl100k_base's) pattern.
	patLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patCL100k = `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`
	patQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patO200k  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patTekken is Mistral's Tekken (Mistral-Nemo, Pixtral…): o200k without contractions,
	// single digits.
	patTekken   = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patDigits3  = `\p{N}{1,3}`
	patDSCJK    = `[一-龥぀-ゟ゠-ヿ]+`
	patDeepSeek = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

type knownKind int

const (
	kindGPT2 knownKind = iota
	kindLlama3
	kindQwen2
	kindO200k
	kindTekken
	kindDigits3
	kindDSCJK
	kindDeepSeek
)

var knownPatterns = map[string]knownKind{
	patGPT2:     kindGPT2,
	patLlama3:   kindLlama3,
	patCL100k:   kindLlama3, // same matches: see TestKnownSplittersMatchRegexp
	patQwen2:    kindQwen2,
	patO200k:    kindO200k,
	patTekken:   kindTekken,
	patDigits3:  kindDigits3,
	patDSCJK:    kindDSCJK,
	patDeepSeek: kindDeepSeek,
	// tiktoken's spelling of the GPT-2 pattern
	`'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`: kindGPT2,
}

// knownSplitter returns a hand-written matcher for a well-known pattern, or nil.
func knownSplitter(pattern string) patternSplitter {
	k, ok := knownPatterns[pattern]
	if !ok {
		return nil
	}
	classOnce.Do(initClasses)
	return &knownSplitterImpl{kind: k}
}

type knownSplitterImpl struct{ kind knownKind }

func (k *knownSplitterImpl) split(s string, yield func(string)) {
	k.matches(s, func(a, b int) { yield(s[a:b]) })
}

// cls returns the class bits and width of the rune at s[i].
func cls(s string, i int) (uint16, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return classFlat[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return runeClass(r), w
}

func (k *knownSplitterImpl) matches(s string, yield func(a, b int)) {
	var next func(s string, i int) int
	switch k.kind {
	case kindGPT2:
		next = nextGPT2
	case kindLlama3:
		next = func(s string, i int) int { return nextLlama3(s, i, 3) }
	case kindQwen2:
		next = func(s string, i int) int { return nextLlama3(s, i, 1) }
	case kindO200k:
		next = func(s string, i int) int { return nextO200k(s, i, true, 3) }
	case kindTekken:
		next = func(s string, i int) int { return nextO200k(s, i, false, 1) }
	case kindDigits3:
		next = func(s string, i int) int { return runN(s, i, cN, 3) }
	case kindDSCJK:
		next = nextDSCJK
	case kindDeepSeek:
		next = nextDeepSeek
	}
	for i := 0; i < len(s); {
		e := next(s, i)
		if e > i {
			yield(i, e)
			i = e
			continue
		}
		_, w := cls(s, i)
		i += w
	}
}

// runN returns the end of up to max (0: any number of) runes of class c from i, or i.
func runN(s string, i int, c uint16, max int) int {
	n := 0
	for i < len(s) && (max == 0 || n < max) {
		k, w := cls(s, i)
		if k&c == 0 {
			break
		}
		i += w
		n++
	}
	return i
}

// contraction returns the end of 's|'t|'re|'ve|'m|'ll|'d at i (case-insensitively, where
// Oniguruma folds ſ with s), or i.
func contraction(s string, i int, fold bool) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return i
	}
	c := s[i+1]
	lower := c
	if fold && c >= 'A' && c <= 'Z' {
		lower = c + 32
	}
	switch lower {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v', 'l':
		if i+2 < len(s) {
			d := s[i+2]
			if fold && d >= 'A' && d <= 'Z' {
				d += 32
			}
			if (lower == 'r' && d == 'e') || (lower == 'v' && d == 'e') || (lower == 'l' && d == 'l') {
				return i + 3
			}
		}
	case 0xC5: // ſ is C5 BF
		if fold && i+2 < len(s) && s[i+2] == 0xBF {
			return i + 3
		}
	}
	return i
}

// whitespace handles \s*[\r\n]+|\s+(?!\S)|\s+ at i (where s[i] is \s), given whether the
// \s*[\r\n]+ alternative is part of the pattern.
func whitespace(s string, i int, crlf bool) int {
	end := i
	lastNL := -1
	lastStart := i // start of the last rune of the run
	for end < len(s) {
		k, w := cls(s, end)
		if k&cSpace == 0 {
			break
		}
		if s[end] == '\r' || s[end] == '\n' {
			lastNL = end + 1
		}
		lastStart = end
		end += w
	}
	if crlf && lastNL > 0 {
		return lastNL
	}
	if end == len(s) {
		return end
	}
	// followed by \S: \s+(?!\S) backs off one rune, if that leaves one; else \s+.
	if lastStart > i {
		return lastStart
	}
	return end
}

const cLN = cL | cN

func nextGPT2(s string, i int) int {
	if e := contraction(s, i, false); e > i {
		return e
	}
	c, w := cls(s, i)
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		c2, _ := cls(s, i+1)
		if c2&cSpace == 0 { // ' ' followed by L, N or other
			c, j = c2, i+1
		}
	}
	switch {
	case c&cL != 0:
		return runN(s, j, cL, 0)
	case c&cN != 0:
		return runN(s, j, cN, 0)
	case c&cSpace == 0:
		return runOther(s, j)
	}
	_ = w
	return whitespace(s, i, false)
}

// runOther returns the end of [^\s\p{L}\p{N}]+ from i.
func runOther(s string, i int) int {
	for i < len(s) {
		k, w := cls(s, i)
		if k&(cSpace|cLN) != 0 {
			break
		}
		i += w
	}
	return i
}

func crlfRun(s string, i int, slash bool) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/')) {
		i++
	}
	return i
}

func nextLlama3(s string, i int, digits int) int {
	if e := contraction(s, i, true); e > i {
		return e
	}
	c, w := cls(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c&cL != 0 {
		return runN(s, i, cL, 0)
	}
	if c&cN == 0 && s[i] != '\r' && s[i] != '\n' && i+w < len(s) {
		if c2, _ := cls(s, i+w); c2&cL != 0 {
			return runN(s, i+w, cL, 0)
		}
	}
	if c&cN != 0 {
		return runN(s, i, cN, digits)
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	if e, ok := punctRun(s, i, c, false); ok {
		return e
	}
	return whitespace(s, i, true)
}

// punctRun matches ` ?[^\s\p{L}\p{N}]+` at i (c is s[i]'s class) and the run of \r\n
// (and / with slash) after it; ok is false if none starts at i.
func punctRun(s string, i int, c uint16, slash bool) (end int, ok bool) {
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := cls(s, i+1); c2&(cSpace|cLN) == 0 {
			j, c = i+1, c2
		}
	}
	if c&(cSpace|cLN) != 0 {
		return 0, false
	}
	return crlfRun(s, runOther(s, j), slash), true
}

const (
	cUpper = cLu | cLt | cLm | cLo | cM
	cLower = cLl | cLm | cLo | cM
)

// o200kWord tries [U]*[W]+ (upperFirst false) or [U]+[W]* from j; -1 if no match.
func o200kWord(s string, j int, upperFirst bool) int {
	k := runN(s, j, cUpper, 0)
	if upperFirst {
		if k == j {
			return -1
		}
		return runN(s, k, cLower, 0)
	}
	if m := runN(s, k, cLower, 0); m > k {
		return m
	}
	// Back off the upper run to the last rune that is also lower-class.
	last := -1
	for p := j; p < k; {
		c, w := cls(s, p)
		if c&cLower != 0 {
			last = p + w
		}
		p += w
	}
	return last
}

// nextO200k matches o200k's pattern; without contractions and with single digits it is
// Tekken's.
func nextO200k(s string, i int, contractions bool, digits int) int {
	c, w := cls(s, i)
	prefix := c&cLN == 0 && s[i] != '\r' && s[i] != '\n'
	for _, upper := range [2]bool{false, true} {
		if prefix && i+w < len(s) {
			if e := o200kWord(s, i+w, upper); e > 0 {
				return contractionOpt(s, e, contractions)
			}
		}
		if e := o200kWord(s, i, upper); e > 0 {
			return contractionOpt(s, e, contractions)
		}
	}
	if c&cN != 0 {
		return runN(s, i, cN, digits)
	}
	if e, ok := punctRun(s, i, c, true); ok {
		return e
	}
	if c&cSpace != 0 {
		return whitespace(s, i, true)
	}
	return i
}

func contractionOpt(s string, e int, on bool) int {
	if !on {
		return e
	}
	if x := contraction(s, e, true); x > e {
		return x
	}
	return e
}

func nextDSCJK(s string, i int) int {
	e := i
	for e < len(s) {
		r, w := utf8.DecodeRuneInString(s[e:])
		if !((r >= 0x4e00 && r <= 0x9fa5) || (r >= 0x3040 && r <= 0x309f) || (r >= 0x30a0 && r <= 0x30ff)) {
			break
		}
		e += w
	}
	return e
}

func isASCIIPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func nextDeepSeek(s string, i int) int {
	// [punct][A-Za-z]+
	if isASCIIPunct(s[i]) && i+1 < len(s) && isASCIILetter(s[i+1]) {
		e := i + 1
		for e < len(s) && isASCIILetter(s[e]) {
			e++
		}
		return e
	}
	c, w := cls(s, i)
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if c&(cL|cP|cS) == 0 && s[i] != '\r' && s[i] != '\n' && i+w < len(s) {
		if c2, _ := cls(s, i+w); c2&(cL|cM) != 0 {
			return runN(s, i+w, cL|cM, 0)
		}
	}
	if c&(cL|cM) != 0 {
		return runN(s, i, cL|cM, 0)
	}
	//  ?[\p{P}\p{S}]+[\r\n]*
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := cls(s, i+1); c2&(cP|cS) != 0 {
			j, c = i+1, c2
		}
	}
	if c&(cP|cS) != 0 {
		return crlfRun(s, runN(s, j, cP|cS, 0), false)
	}
	if c&cSpace != 0 {
		return whitespace(s, i, true)
	}
	return i
}
