package loadgen

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// BenchmarkSyntheticPrompt is what a synthetic prompt costs a request beyond a fixed
// payload's, warm (every corpus window already seen, as after a run's first seconds):
// draw the conversation, render its chat body, count it through the chat template,
// digest it for the run's fingerprint.
// "payload" is the same steps for a payload line sent as it is, the peer the
// synthetic/fixed ratio of bench/loadgen compares against.
func BenchmarkSyntheticPrompt(b *testing.B) {
	tok := gpt2(b)
	cfg := &Config{}
	cfg.Model = "m"
	bb, err := newBodyBuilder(cfg)
	if err != nil {
		b.Fatal(err)
	}
	syn, err := dataset.NewSynthetic(dataset.Synthetic{Tok: tok, ISL: distribution.Length{Dist: distribution.Fixed{Value: 8}}})
	if err != nil {
		b.Fatal(err)
	}
	payload := dataset.Conversation{Turns: []dataset.Turn{{Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`)}}}
	for _, mode := range []string{"synthetic", "payload"} {
		b.Run(mode, func(b *testing.B) {
			r := &runner{cfg: *cfg, tok: tok, counts: newCounter(tok, cfg.ExtraBody), fp: newFingerprinter("", 0, 1)}
			a := adapterOf(EndpointChat)
			next := func() dataset.Conversation { return payload }
			if mode == "synthetic" {
				next = func() dataset.Conversation { c, _ := syn.Next(); return c }
			}
			sc, tc, rec := &scratch{}, &turnCtx{}, &record.Client{}
			request := func() {
				c := next()
				t := &c.Turns[0]
				body, _ := bb.build(a, t, tc, false)
				*rec = record.Client{ISL: t.ISL}
				r.counts.templateCount(a, t, tc, rec, sc)
				r.fp.bodyDigest(t, sc, body)
				if len(body) == 0 || rec.ISLTemplate <= 0 {
					b.Fatalf("body %q, templated ISL %d", body, rec.ISLTemplate)
				}
			}
			for range 50_000 { // warm: every window of the corpus drawn
				request()
			}
			b.ReportAllocs()
			for b.Loop() {
				request()
			}
		})
	}
}

// TestTemplateCountTurnMemo: a prompt's chat-template count kept in its Turn.Memo is the count templateCount
// makes from the text, for the system prompt and generation-prompt setting it was
// made with; another system prompt, or a run with another tokenizer, counts afresh.
func TestTemplateCountTurnMemo(t *testing.T) {
	tok := gpt2(t)
	cfg := Config{}
	r := newCounter(tok, cfg.ExtraBody)
	a := adapterOf(EndpointChat)
	count := func(r *counter, tt dataset.Turn, system string) int {
		rec := &record.Client{}
		r.templateCount(a, &tt, &turnCtx{system: system}, rec, &scratch{})
		return rec.ISLTemplate
	}
	memo := &dataset.Memo{}
	tt := dataset.Turn{Prompt: "Shall I compare thee to a summer's day?", Memo: memo}
	plain := tt
	plain.Memo = nil
	for _, system := range []string{"", "be brief", ""} {
		want := count(r, plain, system)
		for range 2 { // the first counts and keeps it, the second reads it
			if got := count(r, tt, system); got != want || got <= 0 {
				t.Fatalf("system %q: with the Memo %d, from the text %d", system, got, want)
			}
		}
	}
	// A Memo filled under another tokenizer is not used.
	memo.Store(&turnMemo{prompt: tt.Prompt, hasTmpl: true, tmpl: templated{tmpl: 1}})
	if got, want := count(r, tt, ""), count(r, plain, ""); got != want {
		t.Fatalf("another tokenizer's memo was used: %d, want %d", got, want)
	}
}

// A turn whose prompt was changed after its source made it (the cache-bust salt) is
// counted from its own text, not from the Memo its source gave the old prompt.
func TestTemplateCountMemoOfAnotherPrompt(t *testing.T) {
	tok := gpt2(t)
	r := newCounter(tok, nil)
	a := adapterOf(EndpointChat)
	count := func(tt dataset.Turn) int {
		rec := &record.Client{}
		r.templateCount(a, &tt, &turnCtx{}, rec, &scratch{})
		return rec.ISLTemplate
	}
	tt := dataset.Turn{Prompt: "Shall I compare thee to a summer's day?", Memo: &dataset.Memo{}}
	count(tt) // keeps the unsalted count in the Memo
	salted := tt
	salted.Prompt = saltLine(3, "0123456789abcdef", false) + tt.Prompt
	plain := salted
	plain.Memo = nil
	if got, want := count(salted), count(plain); got != want {
		t.Fatalf("salted prompt counted %d with the old prompt's Memo, %d from its text", got, want)
	}
	s := salter{salt: "0123456789abcdef", tok: tok}
	if c := s.salted(dataset.Conversation{Turns: []dataset.Turn{tt}}, 3); c.Turns[0].Memo != nil {
		t.Error("salted kept the unsalted prompt's Memo")
	}
}

// A synthetic prompt's chat body kept in its Turn.Memo is byte for byte the body built
// afresh, for streamed and whole requests, output caps, extra body fields and a system
// prompt (which is not kept), however the requests alternate.
func TestChatBodyMemo(t *testing.T) {
	tok := gpt2(t)
	syn, err := dataset.NewSynthetic(dataset.Synthetic{Tok: tok, ISL: distribution.Length{Dist: distribution.Fixed{Value: 8}}, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{}
	cfg.Model, cfg.ExtraBody, cfg.MinTokens = "m", map[string]any{"temperature": 0.5}, true
	bb, err := newBodyBuilder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := adapterOf(EndpointChat)
	var turns []dataset.Turn
	for range 300 {
		c, _ := syn.Next()
		turns = append(turns, c.Turns[0])
	}
	kept := 0
	for round := range 4 {
		for i := range turns {
			tt := turns[(i*7+round)%len(turns)]
			tt.OSL = (i + round) % 3 * 16
			stream := (i+round)%2 == 0
			tc := &turnCtx{}
			if i%5 == 0 {
				tc.system = "be brief"
			}
			plain := tt
			plain.Memo = nil
			want, _ := bb.build(a, &plain, tc, stream)
			got, _ := bb.build(a, &tt, tc, stream)
			if string(got) != string(want) {
				t.Fatalf("round %d, turn %d: kept body\n%s\nbuilt\n%s", round, i, got, want)
			}
			if m, ok := tt.Memo.Load().(*turnMemo); ok && m.body != nil {
				kept++
			}
		}
	}
	if kept == 0 {
		t.Error("no body was kept: the test did not exercise the memo")
	}
}
