package mockserver

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
)

func getModel(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func postChat(t *testing.T, url, model string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func listed(t *testing.T, url string) []string {
	_, body := getModel(t, url+"/v1/models")
	var l struct{ Data []struct{ ID string } }
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range l.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestUnknownModel: strict, the mock answers an unknown model as vLLM does (404, "The
// model `x` does not exist."), on requests and GET /v1/models/x; with AnyModel it serves
// any name and lists it from then on; the zero Config serves any name unlisted.
func TestUnknownModel(t *testing.T) {
	start := func(c Config) *Server {
		c.Fast = true
		s, err := New(WithConfig(c))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	strict := start(Config{StrictModel: true})
	if code, body := postChat(t, strict.URL(), "x"); code != 404 || !strings.Contains(body, "The model `x` does not exist.") || !strings.Contains(body, `"NotFoundError"`) {
		t.Errorf("strict, unknown model: %d %s", code, body)
	}
	if code, body := getModel(t, strict.URL()+"/v1/models/x"); code != 404 || !strings.Contains(body, "does not exist") {
		t.Errorf("strict, GET /v1/models/x: %d %s", code, body)
	}
	if code, _ := postChat(t, strict.URL(), DefaultModel); code != 200 {
		t.Errorf("strict, the served model: %d", code)
	}
	anyM := start(Config{StrictModel: true, AnyModel: true})
	if code, _ := getModel(t, anyM.URL()+"/v1/models/llama"); code != 200 {
		t.Errorf("any-model, GET /v1/models/llama: %d", code)
	}
	if code, _ := postChat(t, anyM.URL(), "qwen"); code != 200 {
		t.Errorf("any-model, a request for qwen: %d", code)
	}
	if ids := listed(t, anyM.URL()); strings.Join(ids, ",") != DefaultModel+",llama,qwen" {
		t.Errorf("any-model lists %v, want the default then each name asked for", ids)
	}
	loose := start(Config{})
	if code, _ := postChat(t, loose.URL(), "x"); code != 200 {
		t.Errorf("zero Config, unknown model: %d", code)
	}
	if ids := listed(t, loose.URL()); len(ids) != 1 {
		t.Errorf("zero Config lists %v", ids)
	}
}

// TestModelNamesFlag: --model-names a,b,c serves a model mix: /v1/models lists the
// three in order, each is answered under its own name, and an unknown one gets vLLM's
// 404 (perfgate mock is strict); an empty list is refused.
func TestModelNamesFlag(t *testing.T) {
	c := Config{StrictModel: true, Fast: true}
	fs := flag.NewFlagSet("mock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--model-names", "base, lora-a,lora-b,lora-a"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(WithConfig(c))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if ids := listed(t, s.URL()); strings.Join(ids, ",") != "base,lora-a,lora-b" {
		t.Errorf("/v1/models lists %v; want base, lora-a, lora-b", ids)
	}
	for _, m := range []string{"base", "lora-a", "lora-b"} {
		code, body := postChat(t, s.URL(), m)
		if code != 200 || !strings.Contains(body, `"model":"`+m+`"`) {
			t.Errorf("model %s: %d %s", m, code, body)
		}
	}
	if code, body := postChat(t, s.URL(), "lora-z"); code != 404 || !strings.Contains(body, "The model `lora-z` does not exist.") {
		t.Errorf("unknown model: %d %s", code, body)
	}
	fs = flag.NewFlagSet("mock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&Config{}).RegisterFlags(fs)
	if err := fs.Parse([]string{"--model-names", " , "}); err == nil || !strings.Contains(err.Error(), "model-names") {
		t.Errorf("--model-names ' , ': %v; want an error naming the flag", err)
	}
}
