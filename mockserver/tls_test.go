package mockserver

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// TestTLS: given a certificate and its key the server speaks https: a client that
// trusts the certificate gets /v1/models and a whole streamed chat answer over TLS
// (streams go through fasthttp's writer there), and a plain-HTTP request to the TLS
// port gets no answer. A certificate without its key is a configuration error.
func TestTLS(t *testing.T) {
	certFile, keyFile := testutil.TLSCert(t)
	s := start(t, Config{TLSCert: certFile, TLSKey: keyFile, TTFT: fixedMs(1), ITL: fixedMs(1)})
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL() = %q; want https://…", s.URL())
	}
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := c.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("GET /v1/models over TLS: status %d, tls %v; want 200 over TLS", resp.StatusCode, resp.TLS != nil)
	}
	resp, err = c.Post(s.URL()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"perfgate-model","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var events int
	var done bool
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			events++
			done = done || line == "data: [DONE]"
		}
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !done || events < 6 {
		t.Errorf("streamed chat over TLS: status %d, %d events, [DONE] %v; want 200, >= 6 events (5 tokens, [DONE])", resp.StatusCode, events, done)
	}
	plain, err := http.Get("http" + strings.TrimPrefix(s.URL(), "https") + "/v1/models")
	if err == nil {
		b, _ := io.ReadAll(plain.Body)
		plain.Body.Close()
		if plain.StatusCode == 200 {
			t.Errorf("plain HTTP to the TLS port answered 200: %s", b)
		}
	}
	if err := (&Config{TLSCert: certFile}).Validate(); err == nil || !strings.Contains(err.Error(), "tls_key") {
		t.Errorf("Validate() with a certificate and no key = %v; want an error naming tls_key", err)
	}
	srv, err := New(WithConfig(Config{TLSCert: keyFile, TLSKey: keyFile}), WithTokenizer(gpt2(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err == nil || !strings.Contains(err.Error(), "mockserver: tls") {
		srv.Close()
		t.Errorf("Start() with a key as the certificate = %v; want a mockserver: tls error", err)
	}
}
