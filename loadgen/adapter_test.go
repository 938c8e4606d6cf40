package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// registerAPI adds a kind to the adapter table for the rest of the test (and to
// Endpoints, which configurations are checked against). Tests that call it must not
// run in parallel.
func registerAPI(t *testing.T, e Endpoint, a adapter) {
	t.Helper()
	oldAPIs, oldNames := apis, Endpoints
	apis = append(slices.Clip(apis), apiEntry{e, a})
	Endpoints = endpointNames()
	t.Cleanup(func() { apis, Endpoints = oldAPIs, oldNames })
}

// transcribeAPI is a test-only kind shaped as issue 24's audio transcription: its
// body is multipart/form-data (the model and the prompt as an uploaded file), its
// answer a JSON object with a top-level "text" that the OpenAI chunk parser does not
// read. It is everything such a kind needs on the client: one type and one table
// entry (registerAPI).
type transcribeAPI struct{ openaiAPI }

const pathTranscribe = "/v1/audio/transcriptions"

func (transcribeAPI) path() string    { return pathTranscribe }
func (transcribeAPI) generates() bool { return true }

func (transcribeAPI) body(b *bodyBuilder, t *dataset.Turn, _ *turnCtx, _ bool) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("model", b.model(t))
	fw, _ := mw.CreateFormFile("file", "prompt.txt")
	_, _ = io.WriteString(fw, t.Prompt)
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func (transcribeAPI) parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error) {
	if err := p.Parse(body, ch); err != nil { // usage (input_tokens, output_tokens)
		return false, false, err
	}
	var r struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return false, false, err
	}
	if r.Text == nil {
		return false, false, errors.New("no text")
	}
	res.add([]byte(*r.Text), nil)
	return *r.Text != "", true, nil
}

// A kind added with one adapter type and one table entry is accepted by Validate,
// listed in Endpoints, sent to its own path with its own body and Content-Type, and
// its answer is read and counted as output, with nothing else in the package changed.
func TestAdapterAddedInATest(t *testing.T) {
	const kind Endpoint = "transcribe-test"
	cfg := func(url string) Config {
		// A configured Content-Type (for JSON kinds) must not replace the multipart
		// body's own, which names its boundary.
		return Config{Target: Target{URLs: []string{url}, API: kind, NoStream: true, Model: "whisper", Headers: Headers{"Content-Type": "application/json"}},
			Workload: Workload{ISL: fixed(12), OSL: fixed(4)}, Load: Load{Concurrency: 1}, Stop: Stop{Requests: 3}}
	}
	if err := func() error { c := cfg("http://127.0.0.1:1/v1"); return c.Validate() }(); err == nil || !strings.Contains(err.Error(), string(kind)) {
		t.Fatalf("before registration Validate = %v; want an error naming %q", err, kind)
	}
	registerAPI(t, kind, transcribeAPI{})
	if !slices.Contains(Endpoints, string(kind)) || kind.Path() != pathTranscribe {
		t.Fatalf("Endpoints %v, Path %q: want the new kind listed at %s", Endpoints, kind.Path(), pathTranscribe)
	}
	if tbl := kindsTable(); !strings.Contains(tbl, "| `"+string(kind)+"` | `"+pathTranscribe+"` | yes |") {
		t.Errorf("docs/endpoints.md's generated table does not list the new kind:\n%s", tbl)
	}

	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		got := r.URL.Path + " " + mt
		if err == nil && mt == "multipart/form-data" {
			form, err := multipart.NewReader(r.Body, params["boundary"]).ReadForm(1 << 20)
			if err == nil && len(form.File["file"]) == 1 {
				f, _ := form.File["file"][0].Open()
				b, _ := io.ReadAll(f)
				got += " model=" + strings.Join(form.Value["model"], ",") + " file=" + string(b)
			}
		}
		mu.Lock()
		seen = append(seen, got)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"text":"hello world","usage":{"type":"tokens","input_tokens":12,"output_tokens":2}}`)
	}))
	defer srv.Close()

	out, err := Run(context.Background(), cfg(srv.URL+"/v1"), gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 3 {
		t.Fatalf("%d records, want 3", len(out.Records))
	}
	for _, r := range out.Records {
		if !r.OK() || r.Endpoint != string(kind) || r.OSL != 2 || r.UsageCompletionTokens != 2 || r.UsagePromptTokens != 12 || r.FirstOutput != r.Done {
			t.Errorf("record %s: ok %v (%s %s), endpoint %q, OSL %d, usage %d/%d; want ok, %q, OSL 2, usage 12/2, output at Done",
				r.RequestID, r.OK(), r.ErrorKind, r.Error, r.Endpoint, r.OSL, r.UsagePromptTokens, r.UsageCompletionTokens, kind)
		}
	}
	for _, s := range seen {
		if !strings.HasPrefix(s, pathTranscribe+" multipart/form-data model=whisper file=") || len(s) <= len(pathTranscribe+" multipart/form-data model=whisper file=") {
			t.Errorf("server saw %q; want a multipart body with the model and the prompt as a file at %s", s, pathTranscribe)
		}
	}
}

// A kind's whole-answer parser that fails marks the record malformed, whatever the
// kind: the failure path of the test above.
func TestAdapterParseFailureIsMalformed(t *testing.T) {
	w := newWorker()
	rec, res := &record.Client{}, &result{}
	w.parseBody([]byte(`{"usage":{"input_tokens":1,"output_tokens":1}}`), &call{api: transcribeAPI{}}, rec, res)
	if rec.ErrorKind != record.ErrMalformed || len(res.text) != 0 {
		t.Errorf("error kind %q, text %q; want %q and no text", rec.ErrorKind, res.text, record.ErrMalformed)
	}
}
