package mockserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil/toktest"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// TestEncodeChatMemo: a conversation the ChatML fallback renders is remembered by its
// messages; a repeat is a hit (the same array, no render) with the ids of the rendered
// text, and conversations that render differently (another split between messages,
// another role, no generation prompt) each get their own, correct ids.
func TestEncodeChatMemo(t *testing.T) {
	tok := toktest.Load(t, "gpt2")
	if tok.HasChatTemplate() {
		t.Fatal("gpt2 has a chat template: this test needs the fallback")
	}
	in := inputs{cfg: &Config{}, tok: tok, memo: newEncodeMemo()}
	encode := func(msgs []tokenizer.Message, addGen bool) []int {
		t.Helper()
		var j job
		var rec record.Server
		if e := in.encodeChat(msgs, addGen, "messages", &j, &rec); e != nil {
			t.Fatal(e)
		}
		want := tok.Encode(tokenizer.RenderChatMLFallback(msgs, addGen), false)
		if !slices.Equal(j.ids, want) || rec.ISL != len(want) || rec.TokenizationMode != record.ModeChatTemplateFallback {
			t.Fatalf("%v (gen %v): ids %v ISL %d mode %q, want %v, %d, %q", msgs, addGen, j.ids, rec.ISL, rec.TokenizationMode, want, len(want), record.ModeChatTemplateFallback)
		}
		return j.ids
	}
	one := []tokenizer.Message{{Role: "system", Content: "ab"}, {Role: "user", Content: "c"}}
	a, b := encode(one, true), encode(one, true)
	if &a[0] != &b[0] || len(in.memo.chat) != 1 {
		t.Errorf("a repeated conversation was not a hit (%d remembered)", len(in.memo.chat))
	}
	encode([]tokenizer.Message{{Role: "system", Content: "a"}, {Role: "user", Content: "bc"}}, true)
	encode([]tokenizer.Message{{Role: "user", Content: "ab"}, {Role: "user", Content: "c"}}, true)
	encode(one, false)
	encode([]tokenizer.Message{{Role: "user", Parts: []tokenizer.ContentPart{{Type: "text", Text: "ab"}}}}, true)
	if len(in.memo.chat) != 4 {
		t.Errorf("%d conversations remembered, want 4 (parts are not keyed)", len(in.memo.chat))
	}
	encode([]tokenizer.Message{{Role: "user", Content: strings.Repeat("word ", memoText)}}, true)
	if len(in.memo.chat) != 4 {
		t.Errorf("a conversation over memoText was remembered")
	}
}

// TestEncodeMemo: remembered ids are the tokenizer's, the second call is a hit (the
// same array), a caller's append copies instead of writing into the remembered array,
// and long texts are encoded each time, not remembered.
func TestEncodeMemo(t *testing.T) {
	tok := toktest.Load(t, "gpt2")
	m := newEncodeMemo()
	text := "<|im_start|>user\nShort question?<|im_end|>\n<|im_start|>assistant\n"
	want := tok.Encode(text, false)
	a := m.encode(tok, text)
	b := m.encode(tok, text)
	if len(a) != len(want) || len(b) != len(want) || &a[0] != &b[0] {
		t.Fatalf("ids %v then %v, want %v remembered", a, b, want)
	}
	for i := range want {
		if a[i] != want[i] {
			t.Fatalf("ids %v, want %v", a, want)
		}
	}
	_ = append(b, 1, 2, 3)
	if c := m.encode(tok, text); len(c) != len(want) || cap(c) != len(c) {
		t.Errorf("after a caller's append the remembered ids are %v (cap %d)", c, cap(c))
	}
	long := strings.Repeat("word ", memoText)
	m.encode(tok, long)
	if _, ok := m.m[long]; ok || len(m.m) != 1 {
		t.Errorf("a text over memoText was remembered (%d entries)", len(m.m))
	}
}

// TestRecordsReachTheFile: while the server runs (no Close), each answered request's
// line is in the recording within about recordFlushEvery, not only when the writer's
// buffer fills or the server closes.
func TestRecordsReachTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, RecordFile: file})
	for i := range 3 {
		post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":2}`)
		deadline := time.Now().Add(10 * recordFlushEvery)
		for {
			b, _ := os.ReadFile(file)
			if strings.Count(string(b), "\n") == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("request %d: %d lines in the file %v after it was answered", i+1, strings.Count(string(b), "\n"), 10*recordFlushEvery)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
