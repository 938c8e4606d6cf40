package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/tokenizer"
)

// Popularity is how often each prefix of a pool is chosen: uniformly (the zero value),
// or by Zipf's law, the prefix of rank r (1-based, the pool's order) with probability
// r^-α / Σ_{k=1..N} k^-α. Its text form is "uniform" or "zipf:α" (α > 0).
type Popularity struct {
	// Zipf is α; 0 = uniform.
	Zipf float64
}

// ParsePopularity reads "uniform" (or "") and "zipf:α" with α > 0 and finite.
func ParsePopularity(s string) (Popularity, error) {
	switch t := strings.TrimSpace(s); {
	case t == "" || t == "uniform":
		return Popularity{}, nil
	case strings.HasPrefix(t, "zipf:"):
		a, err := strconv.ParseFloat(strings.TrimPrefix(t, "zipf:"), 64)
		if err != nil || !(a > 0) || math.IsInf(a, 0) {
			return Popularity{}, fmt.Errorf("prefix popularity %q: want zipf:α with α a number > 0", s)
		}
		return Popularity{Zipf: a}, nil
	}
	return Popularity{}, fmt.Errorf("prefix popularity %q: want uniform or zipf:α (α > 0)", s)
}

// String is the text form: "uniform" or "zipf:α".
func (p Popularity) String() string {
	if p.Zipf == 0 {
		return "uniform"
	}
	return "zipf:" + strconv.FormatFloat(p.Zipf, 'g', -1, 64)
}

// IsZero reports the uniform popularity (so JSON's omitzero leaves it out).
func (p Popularity) IsZero() bool { return p.Zipf == 0 }

// Err reports an invalid α (negative, NaN or infinite).
func (p Popularity) Err() error {
	if p.Zipf < 0 || math.IsNaN(p.Zipf) || math.IsInf(p.Zipf, 0) {
		return fmt.Errorf("prefix popularity zipf:%v: want α > 0", p.Zipf)
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (p Popularity) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with [ParsePopularity].
func (p *Popularity) UnmarshalText(b []byte) error {
	v, err := ParsePopularity(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// PrefixBucket is one group of a prefix pool, as guidellm's prefix_buckets: Count
// distinct prefixes of Tokens tokens each, chosen for a share Weight/ΣWeight of the
// conversations.
type PrefixBucket struct {
	Tokens int     `json:"prefix_tokens"`
	Count  int     `json:"prefix_count"`
	Weight float64 `json:"bucket_weight"`
}

// PrefixBuckets is a prefix pool as buckets. Its compact text form is a comma-separated
// list of TOKENSxCOUNT[:WEIGHT] (weight 1 when left out): "2000x100:0.7,500x10:0.3";
// a text starting with "[" is read as the JSON list
// [{"prefix_tokens":2000,"prefix_count":100,"bucket_weight":70}, …].
type PrefixBuckets []PrefixBucket

// ParsePrefixBuckets reads the compact or JSON form (see [PrefixBuckets]) and checks it.
func ParsePrefixBuckets(s string) (PrefixBuckets, error) {
	s = strings.TrimSpace(s)
	var bs PrefixBuckets
	if strings.HasPrefix(s, "[") {
		d := json.NewDecoder(strings.NewReader(s))
		d.DisallowUnknownFields()
		var raw []PrefixBucket
		if err := d.Decode(&raw); err != nil {
			return nil, fmt.Errorf("prefix buckets: %v", err)
		}
		bs = raw
	} else {
		for i, item := range strings.Split(s, ",") {
			item = strings.TrimSpace(item)
			spec, weight, hasW := strings.Cut(item, ":")
			tok, count, ok := strings.Cut(spec, "x")
			b := PrefixBucket{Weight: 1}
			var e1, e2, e3 error
			b.Tokens, e1 = strconv.Atoi(strings.TrimSpace(tok))
			b.Count, e2 = strconv.Atoi(strings.TrimSpace(count))
			if hasW {
				b.Weight, e3 = strconv.ParseFloat(strings.TrimSpace(weight), 64)
			}
			if !ok || e1 != nil || e2 != nil || e3 != nil {
				return nil, fmt.Errorf("prefix buckets: item %d %q: want TOKENSxCOUNT[:WEIGHT], such as 2000x100:0.7", i+1, item)
			}
			bs = append(bs, b)
		}
	}
	if err := bs.Err(); err != nil {
		return nil, err
	}
	return bs, nil
}

// Err reports what is wrong with the buckets: a bucket with no tokens or no
// prefixes, a negative or non-finite weight, or weights that do not add up to a
// positive number. An empty list is valid (no pool).
func (bs PrefixBuckets) Err() error {
	if len(bs) == 0 {
		return nil
	}
	var errs []error
	sum := 0.0
	for i, b := range bs {
		if b.Tokens < 1 {
			errs = append(errs, fmt.Errorf("prefix buckets: bucket %d: prefix_tokens %d: want at least 1", i+1, b.Tokens))
		}
		if b.Count < 1 {
			errs = append(errs, fmt.Errorf("prefix buckets: bucket %d: prefix_count %d: want at least 1", i+1, b.Count))
		}
		if b.Weight < 0 || math.IsNaN(b.Weight) || math.IsInf(b.Weight, 0) {
			errs = append(errs, fmt.Errorf("prefix buckets: bucket %d: bucket_weight %v: want a finite number >= 0", i+1, b.Weight))
		} else {
			sum += b.Weight
		}
	}
	if !(sum > 0) && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("prefix buckets: the bucket weights add up to %v: want a positive sum", sum))
	}
	return errors.Join(errs...)
}

// String is the compact text form.
func (bs PrefixBuckets) String() string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = fmt.Sprintf("%dx%d:%s", b.Tokens, b.Count, strconv.FormatFloat(b.Weight, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Size is the number of distinct prefixes.
func (bs PrefixBuckets) Size() int {
	n := 0
	for _, b := range bs {
		n += b.Count
	}
	return n
}

// MaxTokens is the longest bucket's prefix length.
func (bs PrefixBuckets) MaxTokens() int {
	m := 0
	for _, b := range bs {
		m = max(m, b.Tokens)
	}
	return m
}

// Prefixes configures the shared parts a synthetic prompt starts with, in this order:
// the shared system prompt (Synthetic.PrefixTokens), one prefix of a pool (Buckets,
// chosen by Popularity), and a per-conversation user context (UserContextTokens).
type Prefixes struct {
	Buckets    PrefixBuckets
	Popularity Popularity
	// UserContextTokens is the length of a text unique to each conversation that starts
	// its first turn's prompt (later turns carry it in their history). 0 = none.
	UserContextTokens int
}

// active reports whether any part is configured.
func (p Prefixes) active() bool { return len(p.Buckets) > 0 || p.UserContextTokens > 0 }

// pool is a prefix pool: its buckets' prefixes, numbered 0..Size()-1 bucket by bucket,
// each made the first time it is chosen (so memory grows with the distinct prefixes
// used, never with requests) from a writer seeded with (seed, number), so a prefix's
// text does not depend on the order prefixes are first chosen in.
type pool struct {
	buckets PrefixBuckets
	first   []int       // first[b] is bucket b's first prefix number
	bucketW []float64   // cumulative bucket weights, normalised to end at 1
	rank    [][]float64 // per bucket: the cumulative rank probabilities (nil = uniform)
	sys     string      // the shared system prompt, which every prefix starts with
	w       *Writer     // makes the prefixes; reseeded per prefix
	pcg     *rand.PCG
	seed    uint64
	text    []string // prefix k's text, sys included; "" until made
	count   []int32  // the token count of text[k]
	tok     *tokenizer.Tokenizer
}

// newPool returns the pool of bs, its prefixes following sys.
func newPool(tok *tokenizer.Tokenizer, style string, bs PrefixBuckets, pop Popularity, sys string, seed uint64) (*pool, error) {
	if err := errors.Join(bs.Err(), pop.Err()); err != nil {
		return nil, err
	}
	w, err := NewWriter(tok, style, seed)
	if err != nil {
		return nil, err
	}
	w.noFit = true // each prefix is made once: nothing to remember
	p := &pool{buckets: bs, sys: sys, w: w, pcg: rand.NewPCG(seed, 0), seed: seed, tok: tok}
	w.rng = rand.New(p.pcg)
	sum, n := 0.0, 0
	for _, b := range bs {
		sum += b.Weight
	}
	acc := 0.0
	for _, b := range bs {
		p.first = append(p.first, n)
		n += b.Count
		acc += b.Weight / sum
		p.bucketW = append(p.bucketW, acc)
		p.rank = append(p.rank, rankCDF(b.Count, pop))
	}
	p.bucketW[len(p.bucketW)-1] = 1
	p.text = make([]string, n)
	p.count = make([]int32, n)
	return p, nil
}

// rankCDF is the cumulative probability of ranks 1..n under pop; nil for uniform.
func rankCDF(n int, pop Popularity) []float64 {
	if pop.Zipf == 0 || n < 2 {
		return nil
	}
	c := make([]float64, n)
	acc := 0.0
	for r := range n {
		acc += math.Pow(float64(r+1), -pop.Zipf)
		c[r] = acc
	}
	for r := range c {
		c[r] /= acc
	}
	c[n-1] = 1
	return c
}

// RankProbabilities returns the probability of each rank 1..n (index 0 is rank 1)
// under pop: 1/n each for uniform, r^-α/Σk^-α for Zipf.
func RankProbabilities(n int, pop Popularity) []float64 {
	out := make([]float64, n)
	c := rankCDF(n, pop)
	prev := 0.0
	for r := range out {
		if c == nil {
			out[r] = 1 / float64(n)
			continue
		}
		out[r], prev = c[r]-prev, c[r]
	}
	return out
}

// size is the number of distinct prefixes.
func (p *pool) size() int { return len(p.text) }

// pick draws a prefix number: a bucket by weight, then a rank in it by popularity.
func (p *pool) pick(rng *rand.Rand) int {
	b := 0
	if len(p.buckets) > 1 {
		b = sort.SearchFloat64s(p.bucketW, rng.Float64())
		b = min(b, len(p.buckets)-1)
	}
	cnt := p.buckets[b].Count
	var r int
	if c := p.rank[b]; c != nil {
		r = min(sort.SearchFloat64s(c, rng.Float64()), cnt-1)
	} else {
		r = rng.IntN(cnt)
	}
	return p.first[b] + r
}

// bucketOf returns the bucket prefix k belongs to.
func (p *pool) bucketOf(k int) int {
	return sort.Search(len(p.first), func(b int) bool { return p.first[b] > k }) - 1
}

// get returns prefix k's text (the shared prefix included) and its token count,
// making it the first time: a text of exactly the bucket's length, or the closest
// the corpus gave (the prompts that start with it are exact either way).
func (p *pool) get(k int) (string, int) {
	if p.text[k] == "" {
		b := p.buckets[p.bucketOf(k)]
		p.pcg.Seed(p.seed, 0x9f1e_0000_0000+uint64(k))
		t, _ := p.w.Text("", b.Tokens)
		p.text[k] = p.sys + t
		p.count[k] = int32(p.tok.Count(p.text[k], false))
	}
	return p.text[k], int(p.count[k])
}

// prefixText is a prompt's leading text and its token count, and the pool prefix it
// holds (Turn.Prefix: its number from 1; 0 = none).
type prefixText struct {
	text string
	n, k int
}

// initPrefixes sets up s's prefix pool and user contexts (cfg.Prefixes is active).
func (s *SyntheticSource) initPrefixes() error {
	cfg := s.cfg
	if cfg.Prefixes.UserContextTokens < 0 {
		return fmt.Errorf("dataset: user context length %d < 0", cfg.Prefixes.UserContextTokens)
	}
	if len(cfg.Prefixes.Buckets) > 0 {
		p, err := newPool(cfg.Tok, s.w.style, cfg.Prefixes.Buckets, cfg.Prefixes.Popularity, s.prefix, cfg.Seed)
		if err != nil {
			return err
		}
		s.pool = p
	}
	w, err := NewWriter(cfg.Tok, s.w.style, cfg.Seed)
	if err != nil {
		return err
	}
	w.noFit = true // each context is made once
	s.ctxPCG = rand.NewPCG(cfg.Seed, 0)
	w.rng = rand.New(s.ctxPCG)
	s.ctxW = w
	s.pick = rand.New(rand.NewPCG(cfg.Seed, 0x5e1ec7))
	if s.prefix != "" {
		s.prefixN = cfg.Tok.Count(s.prefix, false)
	}
	return nil
}

// heads returns conversation conv's prompt start: the shared prefix and the pool's
// prefix for every turn, and for the first turn that followed by the conversation's
// user context. Conversation conv's context is made from a writer seeded with
// (seed, conv), so it does not depend on what was drawn before.
func (s *SyntheticSource) heads(conv int) (head, first prefixText) {
	head = prefixText{text: s.prefix, n: s.prefixN}
	if s.pool != nil {
		k := s.pool.pick(s.pick)
		head.text, head.n = s.pool.get(k)
		head.k = k + 1
	}
	first = head
	if n := s.cfg.Prefixes.UserContextTokens; n > 0 {
		s.ctxPCG.Seed(s.cfg.Seed, 0xc0c7_0000_0000+uint64(conv))
		ctx, _ := s.ctxW.Text("", n)
		first.text = head.text + ctx
		first.n = s.cfg.Tok.Count(first.text, false)
	}
	return head, first
}

// fit returns head followed by text such that the whole is n tokens, and its count
// (n, or the closest reached; head alone when n is not above its count). It first
// makes the rest alone, n minus head's tokens, with the writer's remembered windows,
// and checks the whole once: the tokenizer usually splits at the join. Where it does
// not, it searches with the whole re-encoded each time.
func (s *SyntheticSource) fit(head prefixText, n int) (string, int) {
	if n <= head.n {
		return head.text, head.n
	}
	rest, got, _ := s.w.text("", n-head.n)
	if got == n-head.n {
		whole := head.text + rest
		if s.cfg.Tok.Count(whole, false) == n {
			return whole, n
		}
	}
	return s.w.Text(head.text, n)
}

// PrimeTurns returns one turn per prefix the prompts can start with, for a priming
// phase: each prefix of the pool (the shared prefix included), or the shared prefix
// alone when there is no pool; nil when there is neither. Each turn asks for OSL
// output tokens and carries its exact count as ISL.
func (s *SyntheticSource) PrimeTurns(osl int) []Turn {
	var out []Turn
	add := func(text string, n int) {
		out = append(out, Turn{Prompt: text, ISL: n, RequestedISL: n, Exact: true, OSL: osl})
	}
	switch {
	case s.pool != nil:
		for k := range s.pool.size() {
			add(s.pool.get(k))
		}
	case s.prefix != "":
		add(s.prefix, s.cfg.Tok.Count(s.prefix, false))
	}
	return out
}
