package mockserver

import (
	"strings"
	"testing"
)

// The server keeps a client's X-Request-Id so its recording joins the client's records by
// id, echoes it back, and numbers requests itself when the header is absent or unusable.
func TestRequestIDFromClient(t *testing.T) {
	s := start(t, Config{Fast: true})
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	cases := []struct {
		name, header, want string
	}{
		{"client id kept", "client-7", "client-7"},
		{"absent: numbered", "", "req-"},
		{"non-ASCII: numbered", "caf\xc3\xa9", "req-"},
		{"too long: numbered", strings.Repeat("x", maxRequestIDLen+1), "req-"},
	}
	for _, c := range cases {
		var hdr []string
		if c.header != "" {
			hdr = []string{"X-Request-Id", c.header}
		}
		resp, _ := post(t, s.URL()+"/v1/chat/completions", body, hdr...)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", c.name, resp.StatusCode)
		}
		if c.want == c.header {
			if got := resp.Header.Get("X-Request-Id"); got != c.want {
				t.Errorf("%s: response X-Request-Id = %q, want %q", c.name, got, c.want)
			}
		}
	}
	s.Close()
	recs := s.Records()
	if len(recs) != len(cases) {
		t.Fatalf("recorded %d requests, want %d", len(recs), len(cases))
	}
	for i, c := range cases {
		got := recs[i].RequestID
		if c.want == "req-" {
			if !strings.HasPrefix(got, "req-") {
				t.Errorf("%s: request_id = %q, want a server-numbered req-N", c.name, got)
			}
		} else if got != c.want {
			t.Errorf("%s: request_id = %q, want %q", c.name, got, c.want)
		}
	}
}
