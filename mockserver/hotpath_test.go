package mockserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil/toktest"
)

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
