package run

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

func TestModelsURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://h:8000", "http://h:8000/v1/models"},
		{"http://h:8000/", "http://h:8000/v1/models"},
		{"http://h:8000/v1", "http://h:8000/v1/models"},
		{"https://h/proxy/v1/chat/completions?x=1", "https://h/proxy/v1/models"},
	} {
		u, _ := url.Parse(c.in)
		if got := ModelsURL(u); got != c.want {
			t.Errorf("ModelsURL(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func modelsServer(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-right" && status == http.StatusUnauthorized {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestPreflight(t *testing.T) {
	list := `{"object":"list","data":[{"id":"llama"},{"id":"qwen"}]}`
	served := modelsServer(t, http.StatusOK, list)
	refused := "http://" + testutil.FreeAddr(t)
	for _, c := range []struct {
		name string
		sc   scenario.Scenario
		want string // "" = passes
	}{
		{"mock", scenario.Scenario{}, ""},
		{"served model", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{served}, Model: "qwen"}}}, ""},
		{"no model named", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{served}}}}, ""},
		{"model not served", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{served + "/v1/chat/completions"}, Model: "gpt-4"}}}, `scenario: preflight failed: model "gpt-4" is not served; served: llama, qwen (GET ` + served + `/v1/models)`},
		{"client model", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{served}, Model: "gpt-4"}}}, `model "gpt-4" is not served`},
		{"no models list", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{modelsServer(t, http.StatusOK, "not json")}, Model: "x"}}}, ""},
		{"refused", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{refused}}}}, "scenario: preflight failed: " + refused + ": cannot connect: connection refused; is the server running?"},
		{"bad key", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{modelsServer(t, http.StatusUnauthorized, list)}, APIKey: "sk-wrong"}}}, "GET /v1/models: 401 Unauthorized: check the API key"},
		{"right key", scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{modelsServer(t, http.StatusUnauthorized, list)}, APIKey: "sk-right", Model: "llama"}}}, ""},
	} {
		err := Preflight(t.Context(), c.sc)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: Preflight = %v, want nil", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrPreflight)):
			t.Errorf("%s: Preflight = %v\nwant an ErrPreflight containing %q", c.name, err, c.want)
		}
	}
}

// TestWaitForModel: WaitForModel polls until /v1/models answers 200 listing the model
// (here after three 503s and one list without it), and gives up at the timeout saying
// what the server last answered.
func TestWaitForModel(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case n <= 3:
			w.WriteHeader(http.StatusServiceUnavailable)
		case n == 4:
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"other"}]}`))
		default:
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"other"},{"id":"m"}]}`))
		}
	}))
	defer srv.Close()
	sc := scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{srv.URL}, Model: "m"}}}
	if err := WaitForModel(context.Background(), sc, time.Minute); err != nil {
		t.Fatalf("WaitForModel = %v; want the model ready after a few polls", err)
	}
	if n := calls.Load(); n < 5 {
		t.Errorf("the server was asked %d times; want >= 5 (ready at the fifth)", n)
	}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer down.Close()
	sc.URLs = []string{down.URL}
	err := WaitForModel(context.Background(), sc, 2*WaitForModelPoll)
	if !errors.Is(err, ErrPreflight) || !strings.Contains(err.Error(), "answered 503") {
		t.Errorf("WaitForModel on a server that stays 503 = %v; want ErrPreflight saying it answered 503", err)
	}
}
