package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncodeJSONL(t *testing.T) {
	tok, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	in := "{\"text\": \"Hello world\"}\n\n{\"text\": \"\"}\r\n{\"text\": \"<|endoftext|>\", \"extra\": 1}"
	for _, c := range []struct {
		name string
		opts JSONLOptions
		want string
	}{
		{"ids", JSONLOptions{}, "{\"ids\":[15496,995],\"count\":2}\n{\"ids\":[],\"count\":0}\n{\"ids\":[50256],\"count\":1}\n"},
		{"count", JSONLOptions{CountOnly: true}, "{\"count\":2}\n{\"count\":0}\n{\"count\":1}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := EncodeJSONL(tok, strings.NewReader(in), &out, c.opts); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != c.want {
				t.Errorf("EncodeJSONL(%+v) =\n%s\nwant\n%s", c.opts, got, c.want)
			}
		})
	}
}

func TestEncodeJSONLAddSpecial(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "tiktoken.model"), tinyTiktoken())
	mustWrite(t, filepath.Join(dir, "tokenizer_config.json"), `{"added_tokens_decoder": {"300": {"content": "<s>", "special": true}}, "bos_token": "<s>", "add_bos_token": true}`)
	tok, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := EncodeJSONL(tok, strings.NewReader(`{"text":"hello"}`), &out, JSONLOptions{AddSpecialTokens: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "{\"ids\":[300,259],\"count\":2}\n"; got != want {
		t.Errorf("EncodeJSONL(AddSpecialTokens) = %q, want %q", got, want)
	}
}

func TestEncodeJSONLBadLines(t *testing.T) {
	tok, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, in string
		opts     JSONLOptions
		wantErr  string
		wantOut  string
	}{
		{"bad JSON", "{\"text\":\"a\"}\n{\"text\": 1\n{\"text\":\"b\"}\n", JSONLOptions{}, "line 2: invalid JSON", "{\"ids\":[64],\"count\":1}\n"},
		{"no text", "{\"text\":\"a\"}\n\n{\"prompt\":\"x\"}\n", JSONLOptions{}, "line 3: want {\"text\"", "{\"ids\":[64],\"count\":1}\n"},
		{"messages without chat mode", `{"messages":[{"role":"user","content":"hi"}]}`, JSONLOptions{}, "line 1: has \"messages\" but chat-template mode is off", ""},
		{"text in chat mode", `{"text":"hi"}`, JSONLOptions{ChatTemplate: true}, "line 1: want {\"messages\"", ""},
		{"too long", "{\"text\":\"a\"}\n{\"text\":\"" + strings.Repeat("x", 200) + "\"}\n{\"text\":\"b\"}\n", JSONLOptions{MaxLineBytes: 100}, "line 2: longer than 100 bytes", "{\"ids\":[64],\"count\":1}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := EncodeJSONL(tok, strings.NewReader(c.in), &out, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("EncodeJSONL error = %v, want %q", err, c.wantErr)
			}
			if got := out.String(); got != c.wantOut {
				t.Errorf("written before the error = %q, want %q", got, c.wantOut)
			}
		})
	}
}

func TestEncodeJSONLLongLine(t *testing.T) {
	tok, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("hello world ", 100_000) // 1.2 MB on one line; the final " " is a token too
	line, _ := json.Marshal(map[string]string{"text": text})
	var out bytes.Buffer
	if err := EncodeJSONL(tok, bytes.NewReader(append(line, '\n')), &out, JSONLOptions{CountOnly: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "{\"count\":200001}\n"; got != want {
		t.Errorf("EncodeJSONL(long line) = %q, want %q", got, want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEncodeJSONLWriteError(t *testing.T) {
	tok, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	err = EncodeJSONL(tok, strings.NewReader(`{"text":"a"}`), failWriter{}, JSONLOptions{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("EncodeJSONL(failing writer) error = %v, want disk full", err)
	}
}
