package dataset

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/internal/testutil/toktest"
)

func TestParsePopularity(t *testing.T) {
	for in, want := range map[string]float64{"": 0, "uniform": 0, "zipf:0.8": 0.8, " zipf:1.2 ": 1.2} {
		p, err := ParsePopularity(in)
		if err != nil || p.Zipf != want {
			t.Errorf("ParsePopularity(%q) = %v, %v; want zipf %v", in, p, err, want)
		}
	}
	for _, in := range []string{"zipf:0", "zipf:-1", "zipf:x", "zipf:NaN", "zipf:Inf", "pareto:1", "zipf"} {
		if _, err := ParsePopularity(in); err == nil {
			t.Errorf("ParsePopularity(%q): no error", in)
		}
	}
	if s := (Popularity{Zipf: 1.5}).String(); s != "zipf:1.5" {
		t.Errorf("String = %q", s)
	}
}

func TestParsePrefixBuckets(t *testing.T) {
	got, err := ParsePrefixBuckets("2000x100:0.7, 500x10:0.3,64x1")
	want := PrefixBuckets{{2000, 100, 0.7}, {500, 10, 0.3}, {64, 1, 1}}
	if err != nil || len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("compact = %v, %v; want %v", got, err, want)
	}
	if got.Size() != 111 || got.MaxTokens() != 2000 {
		t.Errorf("Size %d MaxTokens %d", got.Size(), got.MaxTokens())
	}
	js, err := ParsePrefixBuckets(`[{"prefix_tokens":2000,"prefix_count":100,"bucket_weight":70},{"prefix_tokens":500,"prefix_count":10,"bucket_weight":30}]`)
	if err != nil || len(js) != 2 || js[0] != (PrefixBucket{2000, 100, 70}) {
		t.Fatalf("JSON = %v, %v", js, err)
	}
	if back, err := ParsePrefixBuckets(got.String()); err != nil || back.String() != got.String() {
		t.Errorf("round trip %q → %v, %v", got.String(), back, err)
	}
	for in, msg := range map[string]string{
		"2000x0":                  "prefix_count 0",
		"0x5":                     "prefix_tokens 0",
		"10x5:0,20x3:0":           "add up to 0",
		"10x5:-1":                 "bucket_weight -1",
		"10by5":                   "want TOKENSxCOUNT",
		`[{"prefix_tokens":1}]`:   "prefix_count 0",
		`[{"prefix_token":1}]`:    "unknown field",
		"10x5:NaN":                "bucket_weight NaN",
		"":                        "want TOKENSxCOUNT",
		`[{"prefix_tokens":"a"}]`: "cannot unmarshal",
	} {
		if _, err := ParsePrefixBuckets(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParsePrefixBuckets(%q) = %v; want an error with %q", in, err, msg)
		}
	}
}

// The documented rank → probability mapping: r^-α / Σ k^-α, and 1/n for uniform.
func TestRankProbabilities(t *testing.T) {
	p := RankProbabilities(3, Popularity{Zipf: 1})
	h := 1 + 0.5 + 1.0/3
	for r, want := range []float64{1 / h, 0.5 / h, 1.0 / 3 / h} {
		if math.Abs(p[r]-want) > 1e-12 {
			t.Errorf("zipf:1 rank %d: %v; want %v", r+1, p[r], want)
		}
	}
	for r, v := range RankProbabilities(4, Popularity{}) {
		if v != 0.25 {
			t.Errorf("uniform rank %d: %v", r+1, v)
		}
	}
}

// poolSource returns a synthetic source over a pool.
func poolSource(t testing.TB, style string, isl distribution.Distribution, prefixTokens int, pre Prefixes, turns int, seed uint64) *SyntheticSource {
	t.Helper()
	cfg := Synthetic{Tok: gpt2(t), Style: style, ISL: distribution.Length{Dist: isl}, PrefixTokens: prefixTokens, Prefixes: pre, Seed: seed}
	if turns > 1 {
		cfg.Turns = distribution.Length{Dist: distribution.Fixed{Value: float64(turns)}}
	}
	s, err := NewSynthetic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every prompt over a pool re-encodes to its requested length with the prefixes
// counted; it starts with the shared prefix and one of the pool's prefixes (which
// Turn.Prefix names), the first turn then with the conversation's user context; later
// turns carry no context.
func TestPoolPromptsExact(t *testing.T) {
	tk := gpt2(t)
	for _, style := range []string{StyleShakespeare, StyleRandom} {
		pre := Prefixes{Buckets: PrefixBuckets{{Tokens: 100, Count: 5, Weight: 1}, {Tokens: 40, Count: 3, Weight: 1}}, Popularity: Popularity{Zipf: 1.2}, UserContextTokens: 30}
		s := poolSource(t, style, distribution.Normal{Mu: 400, Sigma: 60}, 20, pre, 2, 7)
		prefixes := map[string]bool{}
		for _, tr := range s.PrimeTurns(1) {
			prefixes[tr.Prompt] = true
			if n := tk.Count(tr.Prompt, false); n != tr.ISL || !strings.HasPrefix(tr.Prompt, s.Prefix()) {
				t.Errorf("%s: prime turn: %d tokens, ISL %d", style, n, tr.ISL)
			}
		}
		if len(prefixes) != 8 {
			t.Fatalf("%s: %d distinct prime prompts; want the pool's 8", style, len(prefixes))
		}
		inexact := 0
		for range 200 {
			c, _ := s.Next()
			var start string
			for p := range prefixes {
				if strings.HasPrefix(c.Turns[0].Prompt, p) && len(p) > len(start) {
					start = p
				}
			}
			if start == "" {
				t.Fatalf("%s: %s does not start with a pool prefix", style, c.ID)
			}
			for i, tr := range c.Turns {
				if n := tk.Count(tr.Prompt, false); n != tr.ISL {
					t.Fatalf("%s: %s turn %d: ISL %d but %d tokens", style, c.ID, i, tr.ISL, n)
				}
				if !tr.Exact {
					inexact++
				}
				if !strings.HasPrefix(tr.Prompt, start) {
					t.Errorf("%s: %s turn %d does not start with the conversation's prefix", style, c.ID, i)
				}
				if text, _ := s.pool.get(max(tr.Prefix-1, 0)); tr.Prefix < 1 || tr.Prefix > 8 || text != start {
					t.Errorf("%s: %s turn %d: Prefix %d does not name the pool prefix it starts with", style, c.ID, i, tr.Prefix)
				}
			}
			// The first turn has the context (30 tokens) after the prefix; the second not.
			ctx0 := tk.Count(c.Turns[0].Prompt[len(start):], false)
			if ctx0 < 30 {
				t.Errorf("%s: %s: %d tokens after the prefix; want the 30-token context and more", style, c.ID, ctx0)
			}
		}
		if inexact > 2 {
			t.Errorf("%s: %d of 400 prompts inexact", style, inexact)
		}
	}
}

// Same seed, same prompts; another seed, others. A conversation's context does not
// depend on the conversations before it, and a prefix's text not on the order the
// prefixes were first chosen in.
func TestPoolReproducible(t *testing.T) {
	pre := Prefixes{Buckets: PrefixBuckets{{Tokens: 50, Count: 20, Weight: 1}}, Popularity: Popularity{Zipf: 0.8}, UserContextTokens: 10}
	a := poolSource(t, StyleShakespeare, distribution.Fixed{Value: 120}, 0, pre, 1, 3)
	b := poolSource(t, StyleShakespeare, distribution.Fixed{Value: 120}, 0, pre, 1, 3)
	c := poolSource(t, StyleShakespeare, distribution.Fixed{Value: 120}, 0, pre, 1, 4)
	same := 0
	for range 50 {
		x, _ := a.Next()
		y, _ := b.Next()
		z, _ := c.Next()
		if x.Turns[0].Prompt != y.Turns[0].Prompt {
			t.Fatal("same seed, different prompts")
		}
		if x.Turns[0].Prompt == z.Turns[0].Prompt {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 3 and 4 made %d equal prompts", same)
	}
	// Prefix 7's text alone, made first or after others, is the same.
	p1 := a.pool
	fresh := poolSource(t, StyleShakespeare, distribution.Fixed{Value: 120}, 0, pre, 1, 3).pool
	t1, _ := p1.get(7)
	t2, _ := fresh.get(7)
	if t1 != t2 {
		t.Error("prefix 7 depends on the order prefixes were made in")
	}
}

// The prefixes are drawn with the documented probabilities: each rank's count over
// 20,000 draws within 5 standard deviations of its expectation (fixed seed), for
// uniform, Zipf 0.8 and 1.2, and buckets split by weight.
func TestPoolPopularity(t *testing.T) {
	for _, pop := range []Popularity{{}, {Zipf: 0.8}, {Zipf: 1.2}} {
		bs := PrefixBuckets{{Tokens: 8, Count: 10, Weight: 3}, {Tokens: 8, Count: 5, Weight: 1}}
		p, err := newPool(gpt2(t), StyleRandom, bs, pop, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		s := poolSource(t, StyleRandom, distribution.Fixed{Value: 20}, 0, Prefixes{Buckets: bs, Popularity: pop}, 1, 1)
		const n = 20000
		counts := make([]int, p.size())
		for range n {
			counts[s.pool.pick(s.pick)]++
		}
		for b, bk := range bs {
			share := bk.Weight / 4
			for r, q := range RankProbabilities(bk.Count, pop) {
				want := n * share * q
				sd := math.Sqrt(want * (1 - share*q))
				if got := float64(counts[p.first[b]+r]); math.Abs(got-want) > 5*sd {
					t.Errorf("%v bucket %d rank %d: %v draws; want %.0f ± %.0f", pop, b, r+1, got, want, 5*sd)
				}
			}
		}
	}
}

// The pool's memory grows with the distinct prefixes, not the requests: 100,000
// requests over 10,000 prefixes of 2,000 tokens (trimmed under -short to 4,000
// requests over 1,000 prefixes) keep the live heap under the pool's texts plus a
// fixed allowance.
func TestPoolBoundedMemory(t *testing.T) {
	requests, size, plen := 100_000, 10_000, 2_000
	if testutil.Short() {
		requests, size = 4_000, 1_000
	} else {
		testutil.Long(t)
	}
	tk := toktest.Load(t, "gpt2")
	s, err := NewSynthetic(Synthetic{Tok: tk, Style: StyleShakespeare, ISL: distribution.Length{Dist: distribution.Fixed{Value: float64(plen + 64)}},
		Prefixes: Prefixes{Buckets: PrefixBuckets{{Tokens: plen, Count: size, Weight: 1}}, Popularity: Popularity{Zipf: 0.8}}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()
	var inexact int
	for i := range requests {
		c, _ := s.Next()
		if !c.Turns[0].Exact {
			inexact++
		}
		if i%(requests/4) == 0 {
			t.Logf("%d requests: heap %d MB", i, (heap()-before)>>20)
		}
	}
	var texts int64
	for _, x := range s.pool.text {
		texts += int64(len(x))
	}
	grown := heap() - before
	t.Logf("%d requests over %d prefixes of %d tokens: %d prefixes made, %d MB of prefix text, heap grew %d MB, %d inexact",
		requests, size, plen, countMade(s.pool), texts>>20, grown>>20, inexact)
	if limit := texts + texts/2 + 64<<20; grown > limit {
		t.Errorf("heap grew %d MB; want at most %d MB (the prefixes' text and a fixed allowance)", grown>>20, limit>>20)
	}
	if inexact > requests/100 {
		t.Errorf("%d of %d prompts inexact", inexact, requests)
	}
}

func countMade(p *pool) int {
	n := 0
	for _, x := range p.text {
		if x != "" {
			n++
		}
	}
	return n
}
