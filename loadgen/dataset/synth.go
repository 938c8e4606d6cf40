package dataset

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/tokenizer"
)

// Prompt styles.
const (
	StyleShakespeare = "shakespeare"
	StyleRandom      = "random"
)

// MaxFitAttempts bounds the decode/re-encode rounds spent making one prompt exact.
const MaxFitAttempts = 24

// Synthetic configures a synthetic Source. Lengths are in tokens of Tok.
type Synthetic struct {
	Tok *tokenizer.Tokenizer
	// Style is StyleShakespeare (zero) or StyleRandom.
	Style string
	// ISL is required. OSL with a nil Dist means no output cap.
	ISL, OSL distribution.Length
	// PrefixTokens is the length of a prefix shared by every prompt (its text is the
	// same for every request, so servers can cache it). ISL includes it.
	PrefixTokens int
	// Turns per conversation (nil Dist = 1) and the delay before each later turn, in
	// seconds (nil = none).
	Turns     distribution.Length
	TurnDelay distribution.Distribution
	// Prefixes, when set, adds a prefix pool and a per-conversation user context after
	// the shared prefix (see [Prefixes]); ISL includes them too.
	Prefixes Prefixes
	// Docs is the number of passages per turn (rankings/rerank); each has a length from ISL.
	Docs int
	// Seed seeds every draw.
	Seed uint64
}

// SyntheticSource is the Source a [Synthetic] configures.
type SyntheticSource struct {
	cfg      Synthetic
	w        *Writer
	rng      *rand.Rand
	isl      distribution.Length
	osl      distribution.Length
	turnsLen distribution.Length
	delay    distribution.Distribution
	prefix   string
	prefixN  int // prefix's token count (set with Prefixes)
	n        int
	// The prefix pool and user contexts (nil when Prefixes is not set): pick draws
	// the pool's prefixes; ctxW, reseeded per conversation through ctxPCG, makes the
	// user contexts.
	pool   *pool
	pick   *rand.Rand
	ctxW   *Writer
	ctxPCG *rand.PCG
	// turns is a block of turns that Next hands out a conversation's worth at a time
	// (one allocation per turnBlock turns, not per conversation).
	turns []Turn
}

// turnBlock is how many turns SyntheticSource allocates at once.
const turnBlock = 64

// NewSynthetic validates cfg and returns its source.
func NewSynthetic(cfg Synthetic) (*SyntheticSource, error) {
	if cfg.Tok == nil {
		return nil, errors.New("dataset: synthetic prompts need a tokenizer")
	}
	if cfg.ISL.Dist == nil {
		return nil, errors.New("dataset: no ISL distribution")
	}
	w, err := NewWriter(cfg.Tok, cfg.Style, cfg.Seed)
	if err != nil {
		return nil, err
	}
	s := &SyntheticSource{cfg: cfg, w: w, rng: rand.New(rand.NewPCG(cfg.Seed, 0x1517))}
	s.isl = cfg.ISL
	s.isl.Dist = distribution.WithSrc(cfg.ISL.Dist, rand.NewPCG(cfg.Seed, 1))
	if cfg.OSL.Dist != nil {
		s.osl = cfg.OSL
		s.osl.Dist = distribution.WithSrc(cfg.OSL.Dist, rand.NewPCG(cfg.Seed, 2))
	}
	if cfg.Turns.Dist != nil {
		s.turnsLen = cfg.Turns
		s.turnsLen.Dist = distribution.WithSrc(cfg.Turns.Dist, rand.NewPCG(cfg.Seed, 3))
	}
	if cfg.TurnDelay != nil {
		s.delay = distribution.WithSrc(cfg.TurnDelay, rand.NewPCG(cfg.Seed, 4))
	}
	if cfg.PrefixTokens > 0 {
		p, got := w.Text("", cfg.PrefixTokens)
		if got != cfg.PrefixTokens {
			return nil, fmt.Errorf("dataset: could not build a shared prefix of exactly %d tokens (got %d)", cfg.PrefixTokens, got)
		}
		s.prefix = p
	}
	if cfg.Prefixes.active() {
		if err := s.initPrefixes(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Prefix returns the shared prefix text ("" if none).
func (s *SyntheticSource) Prefix() string { return s.prefix }

// Next implements [Source]; it never runs out.
func (s *SyntheticSource) Next() (Conversation, bool) {
	var buf [24]byte
	id := string(strconv.AppendInt(append(buf[:0], 'c'), int64(s.n), 10)) // "c%d" in one allocation
	s.n++
	nt := 1
	if s.turnsLen.Dist != nil {
		nt = s.turnsLen.Rand()
	}
	if len(s.turns) < nt {
		s.turns = make([]Turn, max(nt, turnBlock))
	}
	c := Conversation{ID: id, At: -1, Turns: s.turns[:nt:nt]}
	s.turns = s.turns[nt:]
	var head, first prefixText // with Prefixes: every turn's start, and the first turn's
	if s.ctxPCG != nil {
		head, first = s.heads(s.n - 1)
	}
	for i := range c.Turns {
		t := &c.Turns[i]
		t.RequestedISL = s.isl.Rand()
		if s.osl.Dist != nil {
			t.OSL = s.osl.Rand()
		}
		if i > 0 && s.delay != nil {
			if d := s.delay.Rand(); d > 0 {
				t.Delay = time.Duration(d * 1e9)
			}
		}
		switch {
		case s.ctxPCG == nil:
			t.Prompt, t.ISL, t.Memo = s.w.text(s.prefix, t.RequestedISL)
		case i == 0:
			t.Prompt, t.ISL = s.fit(first, t.RequestedISL)
		default:
			t.Prompt, t.ISL = s.fit(head, t.RequestedISL)
		}
		t.Exact = t.ISL == t.RequestedISL
		t.Prefix = head.k
		// Rankings/rerank: the input is the query plus every passage (as servers count it).
		for range s.cfg.Docs {
			want := s.isl.Rand()
			d, got := s.w.Text("", want)
			t.Docs = append(t.Docs, d)
			t.ISL += got
			t.RequestedISL += want
			t.Exact = t.Exact && got == want
		}
	}
	return c, true
}

// Writer makes texts of an exact token count. Not safe for concurrent use.
type Writer struct {
	tok     *tokenizer.Tokenizer
	style   string
	rng     *rand.Rand
	ids     []int // natural corpus token ids
	allowed []int // random style: vocabulary minus special ids
	// The natural style's windows of the corpus repeat (a few thousand start positions
	// for each length), and so do their counts: fit remembers how many tokens
	// prefix+window encodes to, for the empty prefix and for the first other prefix
	// seen (a source's shared prefix, whose own count is kept in prefixN). A hit spares
	// the encode, the largest cost of making a prompt; the texts are the same.
	fit     map[fitKey]fitVal
	fitText int // bytes of window text held in fit
	// last[start] is the exact text the last draw at start found with the empty
	// prefix, of last[start].n tokens, without drawing a second start: what text
	// returns for that start and length again (fit's entries never change), found
	// with one index instead of a map lookup per fitting round.
	last    []lastFit
	prefix  string
	prefixN int
	noFit   bool // remember nothing (the tests' reference)
}

// lastFit is one entry of Writer.last: a remembered window's text and Memo, and its
// count n (0 = none).
type lastFit struct {
	n    int
	text string
	memo *Memo
}

// fitKey is a corpus window (start, length m) after the empty prefix or Writer.prefix,
// packed in one word (a struct key hashed as a struct was most of the lookup's cost).
type fitKey uint64

func newFitKey(start, m int, sharedPre bool) fitKey {
	k := fitKey(uint32(start))<<32 | fitKey(uint32(m))<<1
	if sharedPre {
		k |= 1
	}
	return k
}

// fitVal is what Writer.fit remembers of a window: the count of prefix+window, and
// the window's text when it is short (while fitText stays under maxFitText).
type fitVal struct {
	n    int32
	text string
	has  bool  // text is the window's (it may be "")
	memo *Memo // the Turn.Memo of prefix+text (when has)
}

// maxFit bounds Writer.fit's entries (about 48 bytes each); maxFitWindow and
// maxFitText bound the window texts it holds.
const (
	maxFit       = 1 << 17
	maxFitWindow = 512
	maxFitText   = 8 << 20
)

var corpusIDs sync.Map // tokenizer fingerprint+name → []int

// NewWriter returns a Writer for style (StyleShakespeare or StyleRandom) seeded with seed.
func NewWriter(tok *tokenizer.Tokenizer, style string, seed uint64) (*Writer, error) {
	w := &Writer{tok: tok, style: style, rng: rand.New(rand.NewPCG(seed, 0x7e47))}
	switch style {
	case "", StyleShakespeare:
		w.style = StyleShakespeare
		key := tok.Name() + "\x00" + tok.Fingerprint()
		if v, ok := corpusIDs.Load(key); ok {
			w.ids = v.([]int)
		} else {
			w.ids = tok.Encode(corpusText, false)
			corpusIDs.Store(key, w.ids)
		}
		if len(w.ids) == 0 {
			return nil, errors.New("dataset: corpus encodes to no tokens")
		}
	case StyleRandom:
		w.allowed = AllowedTokens(tok)
		if len(w.allowed) == 0 {
			return nil, errors.New("dataset: tokenizer has no non-special tokens")
		}
	default:
		return nil, fmt.Errorf("dataset: unknown prompt style %q", style)
	}
	return w, nil
}

// AllowedTokens returns the vocabulary ids that are not special, ascending (vLLM's
// allowed_tokens).
func AllowedTokens(tok *tokenizer.Tokenizer) []int {
	special := tok.SpecialIDs()
	sort.Ints(special)
	n := tok.VocabSize()
	out := make([]int, 0, n)
	j := 0
	for id := 0; id < n; id++ {
		for j < len(special) && special[j] < id {
			j++
		}
		if j < len(special) && special[j] == id {
			continue
		}
		out = append(out, id)
	}
	return out
}

// Text returns prefix followed by generated text such that the whole encodes
// (without special tokens) to exactly n tokens, and the count it reached: n, or
// the closest count found when n is impossible (e.g. n smaller than the prefix).
func (w *Writer) Text(prefix string, n int) (string, int) {
	text, got, _ := w.text(prefix, n)
	return text, got
}

// text is Text, also returning the text's Memo when the text is a remembered window's
// (nil otherwise).
func (w *Writer) text(prefix string, n int) (string, int, *Memo) {
	// Counts can be remembered for the natural style, with no prefix or the shared one.
	cached := w.style != StyleRandom && !w.noFit && len(w.ids) < 1<<31
	shared := false
	base := 0
	switch {
	case prefix == "":
	case w.prefix == "" && cached:
		w.prefix, w.prefixN = prefix, w.tok.Count(prefix, false)
		base, shared = w.prefixN, true
	case prefix == w.prefix && cached:
		base, shared = w.prefixN, true
	default:
		base, cached = w.tok.Count(prefix, false), false
	}
	if n <= base {
		return prefix, base, nil
	}
	var seq []int
	start := 0
	fresh := func() {
		seq = seq[:0]
		start = w.rng.IntN(max(len(w.ids), 1))
	}
	fresh()
	gen := func(m int) string {
		if w.style == StyleRandom {
			for len(seq) < m {
				seq = append(seq, w.allowed[w.rng.IntN(len(w.allowed))])
			}
			return w.tok.Decode(seq[:m], false)
		}
		seq = seq[:0]
		for i := range m {
			seq = append(seq, w.ids[(start+i)%len(w.ids)])
		}
		return w.tok.Decode(seq, false)
	}
	if cached && w.fit == nil {
		w.fit = map[fitKey]fitVal{}
	}
	quick := cached && prefix == ""
	if quick {
		if w.last == nil {
			w.last = make([]lastFit, len(w.ids))
		}
		if l := &w.last[start]; l.n == n {
			return l.text, n, l.memo
		}
	}
	m := n - base
	best, bestN := "", -1
	var bestMemo *Memo
	for attempt := range MaxFitAttempts {
		if attempt > 0 && attempt%8 == 0 {
			fresh()
			m = n - base
		}
		// The random style draws its tokens in gen: it runs on every attempt, in the
		// same order as ever, so a seed's prompts stay the same.
		text, got := "", -1
		var memo *Memo
		if cached {
			k := newFitKey(start, m, shared)
			if c, ok := w.fit[k]; ok {
				got = int(c.n)
				if c.has && (got == n || bestN < 0 || abs(got-n) < abs(bestN-n)) {
					text, memo = prefix+c.text, c.memo
				}
			} else {
				win := gen(m)
				text = prefix + win
				got = w.tok.Count(text, false)
				if len(w.fit) < maxFit {
					v := fitVal{n: int32(got)}
					if len(win) <= maxFitWindow && w.fitText+len(win) <= maxFitText {
						v.text, v.has, v.memo = win, true, &Memo{}
						w.fitText += len(win)
						memo = v.memo
					}
					w.fit[k] = v
				}
			}
		} else {
			text = prefix + gen(m)
			got = w.tok.Count(text, false)
		}
		if got == n || bestN < 0 || abs(got-n) < abs(bestN-n) {
			if text == "" {
				text, memo = prefix+gen(m), nil
			}
			if got == n {
				if quick && memo != nil && attempt < 8 {
					// Found from this start alone: the same search from it finds it again.
					w.last[start] = lastFit{n: n, text: text, memo: memo}
				}
				return text, n, memo
			}
			best, bestN, bestMemo = text, got, memo
		}
		m += n - got
		if m < 1 {
			m = 1
		}
	}
	return best, bestN, bestMemo
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
