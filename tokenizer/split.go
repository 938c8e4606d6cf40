package tokenizer

import (
	"fmt"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// patternSplitter finds the matches of a split pattern (a tokenizer.json Split regex or a
// tiktoken pat_str). split calls yield with every non-overlapping match of the pattern in s,
// left to right (find-all), as Oniguruma and fancy-regex do; the text between matches is
// the caller's business (see splitBehavior). Implementations are safe for concurrent use.
//
// s should be valid UTF-8 (Hugging Face only ever sees valid UTF-8: the bindings convert
// lossily first, see toValidUTF8). If it is not, each invalid byte is matched as U+FFFD and
// the yielded pieces are the original bytes, so the pieces always concatenate back to the
// matched parts of s.
type patternSplitter interface {
	split(s string, yield func(piece string))
}

// newPatternSplitter compiles pattern. Known patterns (GPT-2, cl100k/Llama-3, Qwen2,
// o200k/gpt-oss, DeepSeek-V3) get hand-written matchers; any other pattern runs on
// regexp2, which supports the look-around these patterns use.
func newPatternSplitter(pattern string) (patternSplitter, error) {
	if m := knownSplitter(pattern); m != nil {
		return m, nil
	}
	return newRegexpSplitter(pattern)
}

// regexpSplitter is the general, slower splitter backed by regexp2.
type regexpSplitter struct {
	re *regexp2.Regexp
}

func newRegexpSplitter(pattern string) (*regexpSplitter, error) {
	re, err := regexp2.Compile(hfPattern(pattern), regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: compile split pattern %q: %w", pattern, err)
	}
	return &regexpSplitter{re: re}, nil
}

// hfPattern rewrites a pattern so that regexp2's character classes agree with Hugging
// Face's (see unicode.go).
func hfPattern(p string) string { return rewriteUnicodeClasses(p) }

func (r *regexpSplitter) split(s string, yield func(string)) {
	r.matches(s, func(a, b int) { yield(s[a:b]) })
}

// matches yields the byte ranges of the matches in s.
func (r *regexpSplitter) matches(s string, yield func(a, b int)) {
	if s == "" {
		return
	}
	// regexp2 matches on runes: keep the byte offset of every rune (invalid bytes become
	// one U+FFFD rune each).
	runes := make([]rune, 0, len(s))
	offs := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		c, w := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, c)
		offs = append(offs, i)
		i += w
	}
	offs = append(offs, len(s))
	m, err := r.re.FindRunesMatch(runes)
	for err == nil && m != nil {
		a, b := m.Index, m.Index+m.Length
		yield(offs[a], offs[b])
		m, err = r.re.FindNextMatch(m)
	}
}
