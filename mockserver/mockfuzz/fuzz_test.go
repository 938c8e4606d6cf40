// Package mockfuzz holds the fuzz targets of the mock server's request parsing and
// capture files. They are a package of their own so that their instrumented test
// binary holds the mock and not the SDKs the mock's own tests import.
package mockfuzz_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/mockserver"
)

// fuzzPaths are the API paths a fuzzed request goes to, one per API kind the mock
// serves with a JSON body (the path byte picks one).
var fuzzPaths = []string{openai.PathChat, openai.PathCompletions, openai.PathResponses, openai.PathMessages,
	openai.PathEmbeddings, openai.PathRanking, openai.PathRerank, openai.PathImages}

// seedPath picks the path a seed file is for, from its name.
func seedPath(name string) uint8 {
	for i, prefix := range []string{"chat", "completions", "responses", "messages", "embeddings", "ranking", "rerank", "images"} {
		if strings.HasPrefix(name, prefix) {
			return uint8(i)
		}
	}
	return 0
}

// FuzzRequest sends request bodies to every API kind of a running mock (through
// HTTP, so it holds whatever shape the per-kind parsing takes). Property: the answer
// is 200 with a body of at most maxAnswer bytes, or a 4xx whose body is an OpenAI (or
// Anthropic) error object naming what was wrong; never a 5xx, a dropped connection or
// a hang; and the server keeps serving. Seeds: testdata/requests/*.json, each sent to
// the kind its name starts with.
func FuzzRequest(f *testing.F) {
	// The largest answer a request may get: image generation's bound
	// (mockserver.MaxImagePixelsPerRequest, about 40 MB of base64) with room to spare;
	// a small context bounds the rest.
	const maxAnswer = 64<<20 + 1
	paths, _ := filepath.Glob("testdata/requests/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seedPath(filepath.Base(p)), b)
	}
	// A small context bounds what one request can make the mock generate.
	s, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Fast: true, MaxModelLen: 512}))
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Start(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	client := &http.Client{Timeout: 30 * time.Second}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := fuzzPaths[int(which)%len(fuzzPaths)]
		resp, err := client.Post(s.URL()+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("POST %s %q: %v", path, body, err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err == nil && len(b) == maxAnswer {
			n, _ := io.Copy(io.Discard, resp.Body)
			t.Fatalf("POST %s %q: an answer of %d bytes; want at most %d", path, body, int64(len(b))+n, maxAnswer-1)
		}
		resp.Body.Close()
		if err != nil {
			t.Fatalf("POST %s %q: reading the answer: %v", path, body, err)
		}
		switch {
		case resp.StatusCode == 200:
			if len(b) == 0 {
				t.Fatalf("POST %s %q: 200 with an empty body", path, body)
			}
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			var e struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
				t.Fatalf("POST %s %q: %d with %q; want an error object with a message", path, body, resp.StatusCode, b)
			}
		default:
			t.Fatalf("POST %s %q: %d %q", path, body, resp.StatusCode, b)
		}
	})
}

// FuzzReadCapture feeds capture files (what `perfgate capture` writes and replays
// read) to ReadCapture. Property: an error naming the line, or captures whose bodies
// are written back byte for byte by MarshalJSON and read again equal. Seeds:
// testdata/captures/*.jsonl.
func FuzzReadCapture(f *testing.F) {
	paths, _ := filepath.Glob("testdata/captures/*.jsonl")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		caps, err := mockserver.ReadCapture(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "mockserver: capture line ") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("ReadCapture error %q names no line", err)
			}
			return
		}
		for _, c := range caps {
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("%+v: MarshalJSON: %v", c, err)
			}
			var back mockserver.Captured
			if err := json.Unmarshal(b, &back); err != nil || !bytes.Equal(back.Body, c.Body) || back.Seq != c.Seq || back.Path != c.Path {
				t.Fatalf("%+v written as %s reads back as %+v, %v", c, b, back, err)
			}
		}
	})
}
