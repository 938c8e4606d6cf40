package dataset

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/distribution/nprand"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/internal/testutil/toktest"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// gpt2 returns the shared gpt2 built-in.
func gpt2(t testing.TB) *tokenizer.Tokenizer { return toktest.Load(t, "gpt2") }

// TestTextExact re-encodes every prompt: its count must be the requested length.
func TestTextExact(t *testing.T) {
	tk := gpt2(t)
	for _, style := range []string{StyleShakespeare, StyleRandom} {
		w, err := NewWriter(tk, style, 1)
		if err != nil {
			t.Fatal(err)
		}
		inexact := 0
		for _, n := range []int{1, 2, 3, 7, 16, 100, 333, 1000, 9000} {
			text, got := w.Text("", n)
			if c := tk.Count(text, false); c != got {
				t.Fatalf("%s: Text(%d) reported %d tokens but re-encodes to %d", style, n, got, c)
			}
			if got != n {
				inexact++
				t.Logf("%s: Text(%d) reached %d", style, n, got)
			}
		}
		if inexact > 0 {
			t.Errorf("%s: %d lengths not exact", style, inexact)
		}
	}
}

func TestSyntheticPrefixAndTurns(t *testing.T) {
	src, err := NewSynthetic(Synthetic{
		Tok: gpt2(t), ISL: distribution.Length{Dist: distribution.Normal{Mu: 300, Sigma: 50}},
		OSL:          distribution.Length{Dist: distribution.Fixed{Value: 20}},
		PrefixTokens: 64, Turns: distribution.Length{Dist: distribution.Fixed{Value: 3}},
		TurnDelay: distribution.Fixed{Value: 0.5}, Seed: 42,
	})
	if err != nil {
		t.Fatal(err)
	}
	prefix := src.Prefix()
	if n := gpt2(t).Count(prefix, false); n != 64 {
		t.Fatalf("prefix has %d tokens; want 64", n)
	}
	for range 10 {
		c, ok := src.Next()
		if !ok || len(c.Turns) != 3 {
			t.Fatalf("Next() = %d turns, %v; want 3, true", len(c.Turns), ok)
		}
		for i, tr := range c.Turns {
			if !strings.HasPrefix(tr.Prompt, prefix) {
				t.Errorf("turn %d does not start with the shared prefix", i)
			}
			if n := gpt2(t).Count(tr.Prompt, false); n != tr.RequestedISL || !tr.Exact || tr.ISL != n {
				t.Errorf("turn %d: %d tokens, requested %d, ISL %d, exact %v", i, n, tr.RequestedISL, tr.ISL, tr.Exact)
			}
			if tr.OSL != 20 {
				t.Errorf("turn %d: OSL %d; want 20", i, tr.OSL)
			}
			if want := map[bool]float64{true: 0, false: 0.5}[i == 0]; tr.Delay.Seconds() != want {
				t.Errorf("turn %d: delay %v; want %vs", i, tr.Delay, want)
			}
		}
	}
	// Same seed, same workload.
	a, _ := NewSynthetic(Synthetic{Tok: gpt2(t), ISL: distribution.Length{Dist: distribution.Normal{Mu: 50, Sigma: 10}}, Seed: 9})
	b, _ := NewSynthetic(Synthetic{Tok: gpt2(t), ISL: distribution.Length{Dist: distribution.Normal{Mu: 50, Sigma: 10}}, Seed: 9})
	for range 5 {
		x, _ := a.Next()
		y, _ := b.Next()
		if x.Turns[0].Prompt != y.Turns[0].Prompt {
			t.Fatal("same seed gave different prompts")
		}
	}
}

// TestTextRemembered: a Writer that remembers its windows' counts writes exactly the
// texts one that remembers nothing writes, from the same seed, with the shared prefix,
// without one, and with other prefixes between them, and over many more draws than
// the corpus has start positions (so windows repeat and the remembered counts are used).
func TestTextRemembered(t *testing.T) {
	tk := gpt2(t)
	ref, _ := NewWriter(tk, StyleShakespeare, 5)
	ref.noFit = true
	w, _ := NewWriter(tk, StyleShakespeare, 5)
	shared, _ := ref.Text("", 12)
	if s, _ := w.Text("", 12); s != shared {
		t.Fatalf("the shared prefix differs: %q vs %q", s, shared)
	}
	lengths := []int{1, 5, 8, 8, 13, 30, 8, 3}
	for i := range 3 * len(ref.ids) {
		n := lengths[i%len(lengths)]
		prefix := ""
		switch i % 3 {
		case 1:
			prefix = shared
			n += 12
		case 2:
			if i%30 == 2 {
				prefix, n = "another prefix", n+3
			}
		}
		a, an := ref.Text(prefix, n)
		b, bn := w.Text(prefix, n)
		if a != b || an != bn {
			t.Fatalf("draw %d (prefix %q, %d tokens): remembered %q (%d), reference %q (%d)", i, prefix, n, b, bn, a, an)
		}
	}
	if len(w.fit) == 0 || len(w.fit) >= 3*len(ref.ids) {
		t.Errorf("%d counts remembered over %d draws: windows were not remembered, or never repeated", len(w.fit), 3*len(ref.ids))
	}
}

// TestTextLastAtStart: a draw at a start whose last exact text had the length asked
// for returns that text and Memo at once (Writer.last), and every draw and the rng's
// sequence stay the reference's: over many more draws of one length than the corpus
// has starts, each text is what the full search gives.
func TestTextLastAtStart(t *testing.T) {
	tk := gpt2(t)
	ref, _ := NewWriter(tk, StyleShakespeare, 9)
	ref.noFit = true
	w, _ := NewWriter(tk, StyleShakespeare, 9)
	full, _ := NewWriter(tk, StyleShakespeare, 9) // remembers counts, never w.last
	texts := map[*Memo]string{}
	draws := 2 * len(ref.ids)
	length := func(i int) int { return 8 - 2*min(i%5/4, 1) } // 8, and 6 now and then
	for i := range draws {
		n := length(i)
		a, an, _ := ref.text("", n)
		b, bn, bm := w.text("", n)
		full.last = nil
		c, cn, cm := full.text("", n)
		if a != b || an != bn || c != b || cn != bn || (bm == nil) != (cm == nil) {
			t.Fatalf("draw %d (%d tokens): %q (%d); full search %q (%d), reference %q (%d)", i, n, b, bn, c, cn, a, an)
		}
		if bm != nil {
			if s, ok := texts[bm]; ok && s != b {
				t.Fatalf("draw %d: one Memo for %q and %q", i, s, b)
			}
			texts[bm] = b
		}
	}
	// The same draws again with every remembered text marked: a third at least come back
	// marked, so they were taken from Writer.last (a start last drawn at the other length, or
	// whose text took another start, is searched).
	v, _ := NewWriter(tk, StyleShakespeare, 9)
	for i := range draws {
		v.text("", length(i))
	}
	for k := range v.last {
		if v.last[k].n > 0 {
			v.last[k].text = "\x00" + v.last[k].text
		}
	}
	marked := 0
	for i := range draws {
		if s, _, _ := v.text("", length(i)); strings.HasPrefix(s, "\x00") {
			marked++
		}
	}
	if marked < draws/3 {
		t.Errorf("%d of %d draws came from Writer.last; want a third at least", marked, draws)
	}
}

func TestTextImpossibleIsReported(t *testing.T) {
	w, _ := NewWriter(gpt2(t), StyleShakespeare, 1)
	text, got := w.Text("a prefix of several tokens", 2)
	if got == 2 || text != "a prefix of several tokens" {
		t.Errorf("Text(prefix, 2) = %q, %d; want the prefix and its own length", text, got)
	}
}

// TestVLLMRandomStream checks the draw order and bounds against vLLM's code: lengths
// from integers(floor(real(1-r)), ceil(real(1+r))+1), output lengths, offsets over the
// vocabulary, then the prefix over the allowed tokens, all from one default_rng(seed).
func TestVLLMRandomStream(t *testing.T) {
	tk := gpt2(t)
	const n, seed = 8, 0
	items, err := VLLMRandomRequests(VLLMRandom{Tok: tk, NumRequests: n, InputLen: 100, OutputLen: 20, RangeRatio: 0.5, PrefixLen: 5, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rng := nprand.NewGenerator(seed)
	if s := tk.NumSpecialTokensToAdd(); s != 0 {
		t.Fatalf("gpt2 adds %d special tokens; the bounds below assume 0", s)
	}
	in := rng.IntegersN(50, 150+1, n) // real = 100: [floor(100·0.5), ceil(100·1.5)]
	out := rng.IntegersN(10, 31, n)
	_ = rng.IntegersN(0, int64(tk.BaseVocabSize()), n) // offsets
	allowed := AllowedTokens(tk)
	var prefix []int
	for _, k := range rng.IntegersN(0, int64(len(allowed)), 5) {
		prefix = append(prefix, allowed[k])
	}
	inexact := 0
	for i, c := range items {
		tr := c.Turns[0]
		if tr.RequestedISL != 5+int(in[i]) || tr.OSL != int(out[i]) {
			t.Errorf("request %d: requested ISL %d OSL %d; want %d, %d", i, tr.RequestedISL, tr.OSL, 5+in[i], out[i])
		}
		if tk.Count(tr.Prompt, false) != tr.ISL {
			t.Errorf("request %d: ISL %d is not the prompt's count", i, tr.ISL)
		}
		if !tr.Exact {
			inexact++
		}
	}
	if p := tk.Decode(prefix, false); !strings.HasPrefix(items[0].Turns[0].Prompt, p[:len(p)/2]) {
		t.Errorf("prompt 0 %q does not start with the prefix %q", items[0].Turns[0].Prompt, p)
	}
	t.Logf("vllm random: %d of %d prompts inexact after 10 retries", inexact, n)
	if _, err := VLLMRandomRequests(VLLMRandom{Tok: tk, NumRequests: 1, InputLen: 0, Seed: 1}); err == nil {
		t.Error("input_len 0 with no prefix accepted; vLLM raises")
	}
	if _, err := VLLMRandomRequests(VLLMRandom{Tok: tk, NumRequests: 1, InputLen: 10, RangeRatio: 1}); err == nil {
		t.Error("range ratio 1 accepted; vLLM requires [0, 1)")
	}
}

// TestVLLMFirstSequence rebuilds request 0's token sequence by hand: prefix + allowed
// tokens from offset 0 + 0 onwards; its decode is the prompt when no retry was needed.
func TestVLLMFirstSequence(t *testing.T) {
	tk := gpt2(t)
	items, err := VLLMRandomRequests(VLLMRandom{Tok: tk, NumRequests: 1, InputLen: 30, OutputLen: 5, Seed: 123})
	if err != nil {
		t.Fatal(err)
	}
	rng := nprand.NewGenerator(123)
	// range ratio 0: one value per bound, so integers draws nothing for the lengths.
	off := rng.Integers(0, int64(tk.VocabSize()))
	allowed := AllowedTokens(tk)
	seq := make([]int, 30)
	for j := range seq {
		seq[j] = allowed[(int(off)+j)%len(allowed)]
	}
	want := tk.Decode(seq, false)
	if got := items[0].Turns[0].Prompt; tk.Count(want, false) == 30 && got != want {
		t.Errorf("prompt = %q; want %q", got, want)
	}
}

func TestReadMooncakeSharedPrefix(t *testing.T) {
	tk := gpt2(t)
	trace := `{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1, 2]}
{"timestamp": 250, "input_length": 90, "output_length": 5, "hash_ids": [1, 3]}
`
	items, err := ReadMooncake(strings.NewReader(trace), tk, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, b := items[0].Turns[0], items[1].Turns[0]
	if items[1].At.Milliseconds() != 250 || a.OSL != 10 {
		t.Errorf("At=%v OSL=%d; want 250ms, 10", items[1].At, a.OSL)
	}
	if !a.Exact || !b.Exact || tk.Count(a.Prompt, false) != 100 || tk.Count(b.Prompt, false) != 90 {
		t.Errorf("lengths: %d (exact %v), %d (exact %v); want 100, 90", tk.Count(a.Prompt, false), a.Exact, tk.Count(b.Prompt, false), b.Exact)
	}
	// Block 1 (64 tokens) is shared.
	n := 0
	for n < len(a.Prompt) && n < len(b.Prompt) && a.Prompt[n] == b.Prompt[n] {
		n++
	}
	if tk.Count(a.Prompt[:n], false) < 60 {
		t.Errorf("shared prefix is %d tokens; want the 64-token block", tk.Count(a.Prompt[:n], false))
	}
	if _, err := ReadMooncake(strings.NewReader("{bad"), tk, 64, 1); err == nil {
		t.Error("a malformed trace was accepted")
	}
}

func TestReadShareGPT(t *testing.T) {
	tk := gpt2(t)
	in := `[{"id":"a","conversations":[{"from":"human","value":"Hello there"},{"from":"gpt","value":"Hi! How can I help you today?"},{"from":"human","value":"Tell me a joke"},{"from":"gpt","value":"No."}]},
{"id":"b","conversations":[{"from":"gpt","value":"orphan"}]}]`
	items, err := ReadShareGPT(strings.NewReader(in), tk)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || len(items[0].Turns) != 2 {
		t.Fatalf("got %+v; want one conversation with 2 turns", items)
	}
	if tr := items[0].Turns[0]; tr.ISL != tk.Count("Hello there", false) || tr.OSL != tk.Count("Hi! How can I help you today?", false) {
		t.Errorf("turn 0: ISL %d OSL %d", tr.ISL, tr.OSL)
	}
}

func TestReadPayloadsAndRecording(t *testing.T) {
	items, err := ReadPayloads(strings.NewReader(`{"model":"m","prompt":"x","stream":true}` + "\n\n" + `{"model":"m"}`))
	if err != nil || len(items) != 2 || !*items[0].Turns[0].Stream || items[1].Turns[0].Stream != nil {
		t.Fatalf("ReadPayloads = %+v, %v", items, err)
	}
	if _, err := ReadPayloads(strings.NewReader("nope")); err == nil {
		t.Error("ReadPayloads accepted a non-JSON line")
	}
	mt := 7
	yes := true
	var sb strings.Builder
	enc := record.NewEncoder(&sb)
	_ = enc.Encode(record.Server{RecvNS: 1e9, Endpoint: "/v1/chat/completions", Model: "m", ISL: 40, MaxCompletionTokens: &mt, IgnoreEOS: &yes, Stream: true})
	_ = enc.Encode(record.Server{RecvNS: 1.5e9, Endpoint: "/v1/completions", Model: "m", ISL: 12, MaxTokens: &mt})
	_ = enc.Encode(record.Server{RecvNS: 2e9, Rejected: "invalid_json"})
	_ = enc.Flush()
	rec, err := ReadRecording(strings.NewReader(sb.String()), gpt2(t), 1)
	if err != nil || len(rec) != 2 {
		t.Fatalf("ReadRecording = %d items, %v; want 2", len(rec), err)
	}
	if r := rec[1]; r.At.Milliseconds() != 500 || r.Turns[0].Endpoint != "completions" || r.Turns[0].MaxTokensField != "max_tokens" || r.Turns[0].ISL != 12 {
		t.Errorf("replayed request = %+v", r)
	}
	if r := rec[0].Turns[0]; r.OSL != 7 || !*r.IgnoreEOS || !*r.Stream || r.MaxTokensField != "max_completion_tokens" {
		t.Errorf("replayed request 0 = %+v", r)
	}
}

func TestAllowedTokens(t *testing.T) {
	tk := gpt2(t)
	a := AllowedTokens(tk)
	if len(a) != tk.VocabSize()-len(tk.SpecialIDs()) {
		t.Errorf("len(AllowedTokens) = %d; want vocab %d - %d special", len(a), tk.VocabSize(), len(tk.SpecialIDs()))
	}
}

// TestVLLMRandomUsesBaseVocabSize checks that, as vLLM does with tokenizer.vocab_size,
// the vllm corpus draws from the vocabulary without added tokens: for Llama 3, 128000
// ids rather than len(tokenizer) = 128256. An explicit VocabSize still overrides it.
func TestVLLMRandomUsesBaseVocabSize(t *testing.T) {
	tk, err := tokenizer.LoadFile(testutil.Fixture(t, "daulet/Meta-Llama-3-8B-Instruct.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tk.BaseVocabSize() != 128000 || tk.VocabSize() != 128256 {
		t.Fatalf("Llama 3: BaseVocabSize() = %d, VocabSize() = %d; want 128000, 128256", tk.BaseVocabSize(), tk.VocabSize())
	}
	gen := func(vocab int) string {
		items, err := VLLMRandomRequests(VLLMRandom{Tok: tk, NumRequests: 6, InputLen: 64, OutputLen: 8, Seed: 1, VocabSize: vocab})
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		for _, c := range items {
			sb.WriteString(c.Turns[0].Prompt)
			sb.WriteString("\x00")
		}
		return sb.String()
	}
	def, base, full := gen(0), gen(128000), gen(128256)
	if def != base {
		t.Error("VocabSize 0 gave other prompts than VocabSize 128000 (BaseVocabSize)")
	}
	if def == full {
		t.Error("VocabSize 0 gave the same prompts as 128256 (len(tokenizer)); want vLLM's 128000")
	}
}

// NewMooncake makes prompts as they are drawn: the same ones ReadMooncake makes, the
// same again when a cycling source comes round (At then -1), and a bad row is an
// error naming its line before any prompt is made.
func TestMooncakeStreams(t *testing.T) {
	tk := gpt2(t)
	trace := `{"timestamp": 10, "input_length": 70, "output_length": 3, "hash_ids": [4, 5]}
{"timestamp": 30, "input_length": 20, "output_length": 4, "hash_ids": [4]}
{"timestamp": 90, "input_length": 33, "output_length": 5, "hash_ids": []}
`
	all, err := ReadMooncake(strings.NewReader(trace), tk, 16, 7)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMooncake(strings.NewReader(trace), tk, 16, 7)
	if err != nil {
		t.Fatal(err)
	}
	m.Cycle = true
	if got := m.Offsets(); len(got) != 3 || got[2].Milliseconds() != 80 {
		t.Errorf("Offsets() = %v; want [0 20ms 80ms]", got)
	}
	for k := range 2 * len(all) {
		c, ok := m.Next()
		want := all[k%len(all)]
		if !ok || c.Turns[0].Prompt != want.Turns[0].Prompt || c.ID != want.ID {
			t.Fatalf("draw %d = %q (ok %v); want row %d's prompt %q", k, c.Turns[0].Prompt, ok, k%len(all), want.Turns[0].Prompt)
		}
		if wantAt := want.At; k >= len(all) {
			if c.At != -1 {
				t.Errorf("draw %d (cycled): At = %v; want -1", k, c.At)
			}
		} else if c.At != wantAt {
			t.Errorf("draw %d: At = %v; want %v", k, c.At, wantAt)
		}
	}
	_, err = NewMooncake(strings.NewReader(trace+`{"timestamp": 1, "input_length": 0}`+"\n"), tk, 16, 7)
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "input_length") {
		t.Errorf("NewMooncake(bad row 4) = %v; want an error naming line 4 and input_length", err)
	}
}

// TestPayloadsStreamed: NewPayloads indexes the lines (blank ones skipped, the stream
// flag kept), Next reads each body from the file as it is drawn (or, for a small file,
// from memory: both ways give the same conversations), cycling when asked, and a bad
// line is a LineError naming it.
func TestPayloadsStreamed(t *testing.T) {
	defer func(v int64) { payloadsInMemory = v }(payloadsInMemory)
	for _, limit := range []int64{0, 1 << 20} {
		payloadsInMemory = limit
		src := "{\"model\":\"a\",\"stream\":true}\n\n  {\"model\":\"b\"}  \r\n{\"model\":\"c\",\"stream\":false}"
		p, err := NewPayloads(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		if p.Len() != 3 || p.InMemory() != (limit > 0) {
			t.Fatalf("limit %d: Len = %d, InMemory = %v; want 3, %v", limit, p.Len(), p.InMemory(), limit > 0)
		}
		p.Cycle = true
		want := []struct {
			body   string
			stream string
			id     string
		}{{`{"model":"a","stream":true}`, "true", "p0"}, {`{"model":"b"}`, "unset", "p1"}, {`{"model":"c","stream":false}`, "false", "p2"}, {`{"model":"a","stream":true}`, "true", "p0"}}
		for i, w := range want {
			c, ok := p.Next()
			if !ok {
				t.Fatalf("limit %d: Next %d: exhausted", limit, i)
			}
			st := "unset"
			if s := c.Turns[0].Stream; s != nil {
				st = fmt.Sprint(*s)
			}
			if got := string(c.Turns[0].Body); got != w.body || st != w.stream || c.ID != w.id || c.At != -1 {
				t.Errorf("limit %d: Next %d = %s %s (stream %s, at %v), want %s %s (stream %s, at -1)", limit, i, c.ID, got, st, c.At, w.id, w.body, w.stream)
			}
			if cap(c.Turns[0].Body) != len(c.Turns[0].Body) {
				t.Errorf("limit %d: Next %d: body has room to grow into the next line (cap %d > len %d)", limit, i, cap(c.Turns[0].Body), len(c.Turns[0].Body))
			}
		}
		p.Cycle = false
		if _, ok := p.Next(); ok {
			t.Errorf("limit %d: Next past the end without Cycle", limit)
		}
		_, err = NewPayloads(strings.NewReader("{\"a\":1}\n{\"a\":\n"))
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 {
			t.Errorf("limit %d: bad second line: %v, want a LineError at line 2", limit, err)
		}
	}
}

// TestShareGPTStreamed: the array and JSONL forms index the same conversations (the
// one without a human turn left out), Next reads each back from its offset, a cycle
// repeats them, and a bad conversation is named.
func TestShareGPTStreamed(t *testing.T) {
	tk := gpt2(t)
	convs := []string{
		`{"id":"a","conversations":[{"from":"human","value":"Hello there"},{"from":"gpt","value":"Hi!"}]}`,
		`{"id":"b","conversations":[{"from":"gpt","value":"orphan"}]}`,
		`{"conversations":[{"from":"user","value":"Tell me, a joke, [please]"}]}`,
	}
	for name, in := range map[string]string{
		"array": " [\n" + strings.Join(convs, " ,\n  ") + "\n]\n",
		"jsonl": strings.Join(convs, "\n") + "\n",
	} {
		g, err := NewShareGPT(strings.NewReader(in), tk)
		if err != nil || g.Len() != 2 {
			t.Fatalf("%s: NewShareGPT = %v, %v; want 2 conversations", name, g, err)
		}
		g.Cycle = true
		var got []string
		for range 3 {
			c, ok := g.Next()
			if !ok {
				t.Fatalf("%s: exhausted early", name)
			}
			got = append(got, c.ID+":"+c.Turns[0].Prompt)
		}
		want := "a:Hello there|s2:Tell me, a joke, [please]|a:Hello there"
		if strings.Join(got, "|") != want {
			t.Errorf("%s: drew %q, want %q", name, strings.Join(got, "|"), want)
		}
	}
	if _, err := NewShareGPT(strings.NewReader(`[{"id":"a","conversations":[]}, {"id": 3}]`), tk); err == nil || !strings.Contains(err.Error(), "conversation 2") {
		t.Errorf("a bad second conversation: %v; want an error naming it", err)
	}
}

// TestRecordingCycleSamePrompts: a replayed recording writes the same prompts on
// every pass.
func TestRecordingCycleSamePrompts(t *testing.T) {
	var sb strings.Builder
	enc := record.NewEncoder(&sb)
	for i := range 3 {
		_ = enc.Encode(record.Server{RecvNS: int64(i+1) * 1e9, Endpoint: "/v1/completions", Model: "m", ISL: 20 + i})
	}
	_ = enc.Flush()
	rc, err := NewRecording(strings.NewReader(sb.String()), gpt2(t), 3)
	if err != nil || rc.Len() != 3 {
		t.Fatalf("NewRecording = %v, %v", rc, err)
	}
	rc.Cycle = true
	var first, second []string
	for i := range 6 {
		c, _ := rc.Next()
		if i < 3 {
			first = append(first, c.Turns[0].Prompt)
		} else {
			second = append(second, c.Turns[0].Prompt)
			if c.At != -1 {
				t.Errorf("pass 2, request %d: At = %v, want -1 (a cycled request has no schedule)", i-3, c.At)
			}
		}
	}
	if strings.Join(first, "\x00") != strings.Join(second, "\x00") {
		t.Errorf("the second pass wrote other prompts than the first")
	}
}

// A text's Memo stands for the text: every draw that returns a Memo returns the same
// text with it each time (with the shared prefix, without, and between other prefixes),
// and windows drawn again bring their Memo back.
func TestTextMemoIsTheText(t *testing.T) {
	w, _ := NewWriter(gpt2(t), StyleShakespeare, 7)
	shared, _ := w.Text("", 12)
	texts := map[*Memo]string{}
	withMemo := 0
	lengths := []int{1, 5, 8, 8, 13, 30, 8, 3}
	for i := range 3 * len(w.ids) {
		n, prefix := lengths[i%len(lengths)], ""
		switch {
		case i%3 == 1:
			prefix, n = shared, n+12
		case i%30 == 2:
			prefix, n = "another prefix", n+3
		}
		text, _, m := w.text(prefix, n)
		if m == nil {
			continue // a text that is not one remembered window
		}
		if prefix != "" && prefix != shared {
			t.Fatalf("draw %d: a Memo for a text after a prefix (%q) that is not remembered", i, prefix)
		}
		withMemo++
		if old, ok := texts[m]; ok && old != text {
			t.Fatalf("draw %d: one Memo for two texts:\n%q\n%q", i, old, text)
		}
		texts[m] = text
	}
	if withMemo == 0 || len(texts) >= withMemo {
		t.Errorf("%d draws with a Memo, %d Memos: windows' Memos were not given again", withMemo, len(texts))
	}
	src, _ := NewSynthetic(Synthetic{Tok: gpt2(t), ISL: distribution.Length{Dist: distribution.Fixed{Value: 8}}, Seed: 3})
	for i := range 2 * len(w.ids) {
		c, _ := src.Next()
		tt := c.Turns[0]
		if tt.Memo == nil {
			t.Fatalf("conversation %d: a synthetic 8-token prompt without a Memo", i)
		}
		if old, ok := texts[tt.Memo]; ok && old != tt.Prompt {
			t.Fatalf("conversation %d: one Memo for two prompts", i)
		}
		texts[tt.Memo] = tt.Prompt
	}
}
