package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Split patterns of the tiktoken vocabularies that do not ship their pattern in a data
// file (it lives in Python source).
const (
	// tiktokenPatternLlama3 is Meta's Llama-3 pat_str: the same as cl100k_base, and the
	// default of transformers' TikTokenConverter.
	tiktokenPatternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// tiktokenPatternKimi is TikTokenTokenizer.pat_str of Moonshot's tokenization_kimi.py
	// (Kimi-K2): o200k-like, with runs of Han characters split off first.
	tiktokenPatternKimi = `[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// tiktokenConfig is what a tiktoken vocabulary takes from the tokenizer_config.json beside it.
type tiktokenConfig struct {
	AddedTokensDecoder map[string]struct {
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens_decoder"`
	BOSToken       json.RawMessage `json:"bos_token"` // a string or an AddedToken object
	AddBOSToken    *bool           `json:"add_bos_token"`
	TokenizerClass string          `json:"tokenizer_class"`
	PatStr         string          `json:"pat_str"`
	AutoMap        json.RawMessage `json:"auto_map"`
}

// loadTiktokenFile loads a tiktoken vocabulary (*.tiktoken, tiktoken.model: one
// "base64-token rank" per line) with, from a tokenizer_config.json in the same directory,
// its added tokens (added_tokens_decoder) and BOS token.
//
// The split pattern comes from, in order: a "pat_str" in tokenizer_config.json; the
// pat_str assignment of a tokenization_*.py beside the file (as Kimi-K2 ships); the Kimi
// pattern if tokenizer_config.json maps AutoTokenizer to tokenization_kimi; else the
// Llama-3 (= cl100k_base) pattern, which is also transformers' default for tiktoken files.
//
// With Kimi's tokenizer class (TikTokenTokenizer), text is cut as its encode cuts it
// before calling tiktoken: into 400,000-character chunks and wherever a run of
// whitespace or non-whitespace exceeds 25,000 characters (Meta's own Llama-3 code does
// the same, but Hugging Face's Llama-3 tokenizer.json, which servers use, does not).
//
// Added-token ids missing between the last rank and the highest added id are named
// "<|reserved_token_ID|>", as tokenization_kimi.py names them. Encode(text, true) puts the
// BOS token first if tokenizer_config.json says add_bos_token, or, when it is silent, if
// it names a bos_token and the tokenizer class is not Kimi's TikTokenTokenizer (a
// Llama-3 tokenizer.json adds <|begin_of_text|>; Kimi's tokenizer adds nothing).
func loadTiktokenFile(name, path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	tokens, err := parseTiktokenRanks(raw)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	h := sha256.New()
	h.Write(raw)
	dir := filepath.Dir(path)
	var cfg tiktokenConfig
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	if c, err := os.ReadFile(cfgPath); err == nil {
		if err := json.Unmarshal(c, &cfg); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", cfgPath, err)
		}
		h.Write(c)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	pattern, err := tiktokenPattern(dir, &cfg)
	if err != nil {
		return nil, err
	}
	special := map[string]int{}
	plain := map[int]bool{}
	maxID := -1
	for k, v := range cfg.AddedTokensDecoder {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("tokenizer: %s: added_tokens_decoder: bad id %q", cfgPath, k)
		}
		if id < len(tokens) && tokens[id] != nil {
			return nil, fmt.Errorf("tokenizer: %s: added token %q has id %d, which %s already uses", cfgPath, v.Content, id, filepath.Base(path))
		}
		special[v.Content] = id
		if !v.Special {
			plain[id] = true
		}
		maxID = max(maxID, id)
	}
	used := map[int]bool{}
	for _, id := range special {
		used[id] = true
	}
	for id := len(tokens); id < maxID; id++ {
		if !used[id] {
			special[fmt.Sprintf("<|reserved_token_%d|>", id)] = id
		}
	}
	b, err := newTiktokenBackend(tokens, pattern, special, 0)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	b.plain = plain
	b.kimiRuns = cfg.TokenizerClass == "TikTokenTokenizer"
	b.sorted = b.sorted[:0]
	for id := range b.specIDs {
		if !plain[id] {
			b.sorted = append(b.sorted, id)
		}
	}
	sortInts(b.sorted)
	if bos := addedTokenContent(cfg.BOSToken); bos != "" {
		add := cfg.TokenizerClass != "TikTokenTokenizer"
		if cfg.AddBOSToken != nil {
			add = *cfg.AddBOSToken
		}
		if id, ok := special[bos]; ok && add {
			b.bos = []int{id}
		}
	}
	return &Tokenizer{name: name, source: path, digest: hex.EncodeToString(h.Sum(nil)), b: b}, nil
}

// addedTokenContent reads a tokenizer_config.json token field: "text" or {"content": "text", …}.
func addedTokenContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// parseTiktokenRanks parses "base64 rank" lines into tokens indexed by rank.
func parseTiktokenRanks(raw []byte) ([][]byte, error) {
	var tokens [][]byte
	for n, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		tok, rank, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("line %d: want \"base64-token rank\", got %.40q", n+1, line)
		}
		r, err := strconv.Atoi(string(bytes.TrimSpace(rank)))
		if err != nil || r < 0 || r > 1<<24 {
			return nil, fmt.Errorf("line %d: bad rank %.20q", n+1, rank)
		}
		t := make([]byte, base64.StdEncoding.DecodedLen(len(tok)))
		k, err := base64.StdEncoding.Decode(t, tok)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if r >= len(tokens) {
			tokens = append(tokens, make([][]byte, r+1-len(tokens))...)
		}
		if tokens[r] != nil {
			return nil, fmt.Errorf("line %d: rank %d appears twice", n+1, r)
		}
		tokens[r] = t[:k:k]
	}
	if len(tokens) == 0 {
		return nil, errors.New("no ranks")
	}
	return tokens, nil
}

// tiktokenPattern finds the split pattern for a tiktoken vocabulary in dir (see
// loadTiktokenFile for the order).
func tiktokenPattern(dir string, cfg *tiktokenConfig) (string, error) {
	if cfg.PatStr != "" {
		return cfg.PatStr, nil
	}
	py, _ := filepath.Glob(filepath.Join(dir, "tokenization_*.py"))
	for _, f := range py {
		src, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("tokenizer: %w", err)
		}
		if p, ok := pythonPatStr(string(src)); ok {
			return p, nil
		}
	}
	if bytes.Contains(cfg.AutoMap, []byte("tokenization_kimi")) {
		return tiktokenPatternKimi, nil
	}
	return tiktokenPatternLlama3, nil
}

// pythonPatStr extracts `pat_str = r"…"` or `pat_str = "|".join([r"""…""", …])` from
// Python source.
func pythonPatStr(src string) (string, bool) {
	i := strings.Index(src, "pat_str =")
	if i < 0 {
		return "", false
	}
	s := strings.TrimLeft(src[i+len("pat_str ="):], " \t")
	if lit, rest, ok := pythonString(s); ok {
		rest = strings.TrimLeft(rest, " \t")
		if !strings.HasPrefix(rest, ".join(") {
			return lit, true
		}
		rest = strings.TrimLeft(rest[len(".join("):], " \t\r\n")
		if !strings.HasPrefix(rest, "[") {
			return "", false
		}
		rest = rest[1:]
		var parts []string
		for {
			rest = strings.TrimLeft(rest, " \t\r\n,")
			if strings.HasPrefix(rest, "]") {
				return strings.Join(parts, lit), len(parts) > 0
			}
			p, r, ok := pythonString(rest)
			if !ok {
				return "", false
			}
			parts, rest = append(parts, p), r
		}
	}
	return "", false
}

// pythonString parses one Python string literal at the start of s (prefix r or none,
// single or triple quotes) and returns it and the rest of s. Non-raw literals have their
// backslash escapes \\, \n, \r, \t, \' and \" processed.
func pythonString(s string) (lit, rest string, ok bool) {
	raw := false
	if len(s) > 0 && (s[0] == 'r' || s[0] == 'R') {
		raw, s = true, s[1:]
	}
	var q string
	switch {
	case strings.HasPrefix(s, `"""`), strings.HasPrefix(s, `'''`):
		q = s[:3]
	case strings.HasPrefix(s, `"`), strings.HasPrefix(s, `'`):
		q = s[:1]
	default:
		return "", "", false
	}
	s = s[len(q):]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], q) {
			return b.String(), s[i+len(q):], true
		}
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			if raw {
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i++
				continue
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
	return "", "", false
}

// tiktokenSplitter compiles a tiktoken pat_str. Patterns written for Rust's regex crate
// may intersect classes with a negated class, [X&&[^Y]], which regexp2 spells as the
// subtraction [X-[Y]] (regexp2 would otherwise read "&&" as literal characters).
func tiktokenSplitter(pattern string) (patternSplitter, error) {
	if m := knownSplitter(pattern); m != nil {
		return m, nil
	}
	if strings.Contains(pattern, "&&") {
		p := strings.ReplaceAll(pattern, "&&[^", "-[")
		if strings.Contains(p, "&&") {
			return nil, fmt.Errorf("tokenizer: split pattern %q: class intersection (&&) is only supported as [X&&[^Y]]", pattern)
		}
		pattern = p
	}
	return newPatternSplitter(pattern)
}
