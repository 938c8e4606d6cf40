package perftest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
)

// Run takes run.Run's options: OnRecord sees every request.
func TestRunOptions(t *testing.T) {
	var n atomic.Int64
	res := Run(t, Scenario{
		Name: "opts",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL: distribution.MustSpec("fixed:8"),
				OSL: distribution.MustSpec("fixed:2"),
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 12,
			},
		},
	},
		run.OnRecord(func(record.Client) { n.Add(1) }))
	cs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 12 || len(cs) != 12 {
		t.Errorf("OnRecord saw %d records, the result has %d; want 12 each", n.Load(), len(cs))
	}
}

// A real endpoint is preflighted: an unreachable server or an unserved model fails the
// test at once, before any request, with the reason on the first line.
func TestRunPreflight(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"data":[{"id":"llama"},{"id":"qwen"}]}`))
			return
		}
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models/") {
			http.NotFound(w, r) // the preflight asks for the model it does not see listed
			return
		}
		hits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	c := Capture(t, func(t testing.TB) {
		Run(t, Scenario{Name: "typo", Config: loadgen.Config{Target: loadgen.Target{URLs: []string{srv.URL}, Model: "lama"}, Stop: loadgen.Stop{Requests: 5}}})
	})
	want := `perftest: scenario "typo": model "lama" is not served; served: llama, qwen (GET ` + srv.URL + `/v1/models)`
	if !c.Stopped() || c.Text() != want || hits.Load() != 0 {
		t.Errorf("unserved model: stopped=%v after %d requests, message\n%s\nwant\n%s", c.Stopped(), hits.Load(), c.Text(), want)
	}

	url := "http://" + testutil.FreeAddr(t)
	c = Capture(t, func(t testing.TB) {
		Run(t, Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{url}}, Stop: loadgen.Stop{Requests: 5}}})
	})
	if !c.Stopped() || !strings.HasPrefix(c.Text(), `perftest: scenario "scenario": `+url+`: cannot connect: connection refused`) {
		t.Errorf("unreachable server: stopped=%v, message\n%s", c.Stopped(), c.Text())
	}
}

// Run's logged artifact path says whether the directory outlives the test: without
// -artifacts it is removed at the end, and the line says how to keep it (and that go
// test does not create -outputdir).
func TestRunLogsArtifactLifetime(t *testing.T) {
	l := &logTB{TB: t}
	res := Run(l, Scenario{
		Name:   "where",
		Mock:   mockserver.Config{Fast: true},
		Config: loadgen.Config{Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:4"), OSL: distribution.MustSpec("fixed:1")}, Stop: loadgen.Stop{Requests: 2}},
	})
	line := ""
	for _, s := range l.logs {
		if strings.Contains(s, "artifacts: "+res.Dir) {
			line = s
		}
	}
	want := artifactsNote(artifactsKept())
	if line == "" || !strings.HasSuffix(line, res.Dir+" ("+want+")") {
		t.Errorf("Run logged %q; want the artifact path %s followed by (%s)", l.logs, res.Dir, want)
	}
	for _, c := range []struct {
		kept bool
		want []string
	}{
		{false, []string{"removed when the test ends", "go test -artifacts -outputdir=DIR", "mkdir -p DIR"}},
		{true, []string{"kept by go test -artifacts"}},
	} {
		for _, w := range c.want {
			if got := artifactsNote(c.kept); !strings.Contains(got, w) {
				t.Errorf("artifactsNote(%v) = %q, want it to say %q", c.kept, got, w)
			}
		}
	}
}
