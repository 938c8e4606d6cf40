package mockserver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/tokenizer"
)

// generator draws output tokens. Its vocabulary is the tokenizer's whole-word tokens
// (a letter word, with or without a leading space/▁/Ġ, that encodes back to itself), so
// that any sequence of them, decoded piece by piece, re-encodes to exactly as many
// tokens: checked at construction on random sequences. Words are drawn from a Zipf law
// over the tokenizer's id order (BPE ids roughly follow frequency).
type generator struct {
	tok    *tokenizer.Tokenizer
	fcum   aliasTable // Zipf draw over first
	wcum   aliasTable // Zipf draw over words
	first  []int      // ids allowed as the first output token
	words  []int      // ids allowed after the first
	fpiece []string   // text of first[i] at the start of an output
	wpiece []string   // text of words[i] after another word
	exact  bool       // sequences re-encode to their length (verified)
}

const (
	maxWordIDs = 8192 // vocabulary drawn from (lowest ids)
	zipfS      = 1.07
	zipfV      = 2
)

func isWord(s string, lead bool) bool {
	if lead {
		if !strings.HasPrefix(s, " ") {
			return false
		}
		s = s[1:]
	}
	if len(s) < 2 || len(s) > 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z') && !(i == 0 && c >= 'A' && c <= 'Z' && !lead) {
			return false
		}
	}
	return true
}

func newGenerator(tok *tokenizer.Tokenizer) (*generator, error) {
	g := &generator{tok: tok}
	special := map[int]bool{}
	for _, id := range tok.SpecialIDs() {
		special[id] = true
	}
	n := tok.VocabSize()
	var lead, bare []int
	for id := 0; id < n && (len(lead) < maxWordIDs || len(bare) < maxWordIDs); id++ {
		if special[id] {
			continue
		}
		s := tok.Decode([]int{id}, false)
		switch {
		case len(lead) < maxWordIDs && isWord(s, true):
			lead = append(lead, id)
		case len(bare) < maxWordIDs && isWord(s, false):
			bare = append(bare, id)
		}
	}
	// Keep only words that encode back to themselves alone.
	keep := func(ids []int) []int {
		out := ids[:0]
		for _, id := range ids {
			s := tok.Decode([]int{id}, false)
			if e := tok.Encode(s, false); len(e) == 1 && e[0] == id {
				out = append(out, id)
			}
		}
		return out
	}
	lead, bare = keep(lead), keep(bare)
	if len(lead) < 16 && len(bare) < 16 {
		return nil, fmt.Errorf("mockserver: tokenizer %s has too few whole-word tokens to generate from", tok.Name())
	}
	ctx := -1
	if len(lead) > 0 {
		ctx = lead[0]
	} else {
		ctx = bare[0]
	}
	// Text of id when it follows another word: decode the pair and take the new
	// suffix (prefix-diff, so decoders that strip a leading space at the start, such as
	// SentencePiece's, are handled).
	pieceAfter := func(id int) string {
		pre := tok.Decode([]int{ctx}, false)
		full := tok.Decode([]int{ctx, id}, false)
		if !strings.HasPrefix(full, pre) {
			return tok.Decode([]int{id}, false)
		}
		return full[len(pre):]
	}
	try := func(first, words []int) bool {
		g.first, g.words = first, words
		g.fpiece = make([]string, len(first))
		for i, id := range first {
			g.fpiece[i] = tok.Decode([]int{id}, false)
		}
		g.fcum, g.wcum = zipfTable(len(first)), zipfTable(len(words))
		g.wpiece = make([]string, len(words))
		for i, id := range words {
			g.wpiece[i] = pieceAfter(id)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for trial := range 24 {
			k := 1 + trial*7
			ids, text := g.sample(rng, k)
			if got := tok.Encode(text, false); !slices.Equal(got, ids) {
				return false
			}
		}
		return true
	}
	switch {
	case len(lead) >= 16 && try(lead, lead):
		g.exact = true
	case len(bare) >= 16 && len(lead) >= 16 && try(bare, lead):
		g.exact = true
	case len(bare) >= 16 && try(bare, bare):
		g.exact = true
	default:
		// Inexact tokenizer (e.g. WordPiece): keep leading-space words; counts are
		// corrected by re-encoding (see generator.exact).
		if len(lead) < 16 {
			lead = bare
		}
		_ = try(lead, lead)
		g.exact = false
	}
	return g, nil
}

// sample draws k tokens with rng and returns their ids and the text a client receives.
func (g *generator) sample(rng *rand.Rand, k int) ([]int, string) {
	ids := make([]int, 0, k)
	var sb strings.Builder
	z := g.newZipf(rng)
	for i := range k {
		id, piece := g.next(rng, z, i)
		ids = append(ids, id)
		sb.WriteString(piece)
	}
	return ids, sb.String()
}

// zipfPair is kept for the call sites' shape; the tables live in the generator.
type zipfPair struct{}

func (g *generator) newZipf(*rand.Rand) zipfPair { return zipfPair{} }

// aliasTable is Vose's alias method for P(k) ∝ 1/(k+v)^s, k in [0, n): a draw costs
// one 64-bit random number and no search.
type aliasTable struct {
	prob  []uint32 // threshold on a 32-bit uniform for keeping column k
	alias []int32
}

func zipfTable(n int) aliasTable {
	w := make([]float64, n)
	total := 0.0
	for k := range w {
		w[k] = math.Pow(float64(k)+zipfV, -zipfS)
		total += w[k]
	}
	scaled := make([]float64, n)
	var small, large []int
	for k := range w {
		scaled[k] = w[k] / total * float64(n)
		if scaled[k] < 1 {
			small = append(small, k)
		} else {
			large = append(large, k)
		}
	}
	t := aliasTable{prob: make([]uint32, n), alias: make([]int32, n)}
	for len(small) > 0 && len(large) > 0 {
		l, g := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.prob[l] = uint32(scaled[l] * (1 << 32))
		t.alias[l] = int32(g)
		scaled[g] += scaled[l] - 1
		if scaled[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	for _, k := range append(small, large...) {
		t.prob[k] = math.MaxUint32
		t.alias[k] = int32(k)
	}
	return t
}

func draw(t aliasTable, rng *rand.Rand) int {
	u := rng.Uint64()
	k := int((u >> 32) * uint64(len(t.prob)) >> 32)
	if uint32(u) < t.prob[k] {
		return k
	}
	return int(t.alias[k])
}

// next returns the i-th output token (i = 0 is the first) and its text.
func (g *generator) next(rng *rand.Rand, _ zipfPair, i int) (int, string) {
	if i == 0 {
		j := draw(g.fcum, rng)
		return g.first[j], g.fpiece[j]
	}
	j := draw(g.wcum, rng)
	return g.words[j], g.wpiece[j]
}

// detokenizer turns a stream of arbitrary token ids into text increments the way
// Hugging Face's and vLLM's incremental detokenizers do: it decodes a short window of
// ids before and after the new one and emits the difference, holding text back while
// it ends in an incomplete UTF-8 sequence (U+FFFD), so no increment ever splits a
// character and the concatenation equals Decode of all ids.
type detokenizer struct {
	tok       *tokenizer.Tokenizer
	ids       []int
	prefixOff int
	readOff   int
}

// add appends id and returns the text that became final ("" while held back).
func (d *detokenizer) add(id int) string {
	d.ids = append(d.ids, id)
	prefix := d.tok.Decode(d.ids[d.prefixOff:d.readOff], false)
	full := d.tok.Decode(d.ids[d.prefixOff:], false)
	if len(full) > len(prefix) && !strings.HasSuffix(full, "\uFFFD") && strings.HasPrefix(full, prefix) {
		out := full[len(prefix):]
		d.prefixOff, d.readOff = d.readOff, len(d.ids)
		return out
	}
	return ""
}

// flush returns the held-back text at the end of the stream (possibly with U+FFFD
// where the ids end inside a character).
func (d *detokenizer) flush() string {
	if d.readOff == len(d.ids) {
		return ""
	}
	prefix := d.tok.Decode(d.ids[d.prefixOff:d.readOff], false)
	full := d.tok.Decode(d.ids[d.prefixOff:], false)
	d.prefixOff, d.readOff = d.readOff, len(d.ids)
	if strings.HasPrefix(full, prefix) {
		return full[len(prefix):]
	}
	return full
}

// stopMatcher finds stop sequences in generated text at token granularity.
type stopMatcher struct {
	stops []string
	tail  []byte // last maxLen-1 bytes emitted
	max   int
	which string // the stop sequence hit
}

// matched returns the stop sequence [stopMatcher.hit] found ("" before a hit).
func (m *stopMatcher) matched() string { return m.which }

func newStopMatcher(stops []string) *stopMatcher {
	var s []string
	m := 0
	for _, x := range stops {
		if x != "" {
			s = append(s, x)
			m = max(m, len(x))
		}
	}
	if len(s) == 0 {
		return nil
	}
	return &stopMatcher{stops: s, max: m}
}

// hit reports whether emitting piece after the text so far would complete a stop
// sequence; if not, it records piece.
func (m *stopMatcher) hit(piece string) bool {
	buf := append(m.tail, piece...)
	for _, s := range m.stops {
		if strings.Contains(string(buf), s) {
			m.which = s
			return true
		}
	}
	if keep := m.max - 1; len(buf) > keep {
		buf = buf[len(buf)-keep:]
	}
	m.tail = append(m.tail[:0], buf...)
	return false
}
