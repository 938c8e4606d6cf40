package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
)

// tlsGroundTruth serves the ground-truth handler over TLS with a throwaway
// certificate; it returns the server, its https URL on "localhost" (so the client
// resolves a name) and the CA file that verifies it.
func tlsGroundTruth(t *testing.T) (*groundTruth, string, string) {
	t.Helper()
	g := newGroundTruth(t)
	certFile, keyFile := testutil.TLSCert(t)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: g.handle, Logger: quiet{}}
	go srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})) //nolint:errcheck
	t.Cleanup(func() { _ = srv.Shutdown(); ln.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return g, "https://localhost:" + port, certFile
}

// TestHTTPPhasesTLS sends 6 streamed requests one after another over TLS to a
// host name: the first opens the connection (DNS lookup, TCP connect and TLS
// handshake recorded, the handshake within connecting), the others reuse it (no
// connection phases). Every record's phases follow each other: sending + waiting +
// receiving is its latency, and the six phases sum to no more than scheduled → done
// and no less than the latency plus the connection's cost.
func TestHTTPPhasesTLS(t *testing.T) {
	g, url, ca := tlsGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 3 })
	const n = 6
	out, err := Run(context.Background(), Config{Target: Target{URLs: []string{url}, TLSCA: ca}, Workload: Workload{ISL: fixed(8)}, Stop: Stop{Requests: n}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != n {
		t.Fatalf("%d records; want %d", len(out.Records), n)
	}
	for i, r := range out.Records {
		if !r.OK() {
			t.Fatalf("request %d failed: %s", i, r.Error)
		}
		p, ok := r.Phases()
		if !ok {
			t.Fatalf("request %d has no phases: %+v", i, r)
		}
		if r.Index == 0 {
			if r.ConnReused || r.DNSLookup <= 0 || r.TLSHandshaking <= 0 || r.Connecting < r.TLSHandshaking {
				t.Errorf("first request: reused %v, dns %v, connecting %v, tls %v; want a new connection with dns > 0 and connecting >= tls > 0",
					r.ConnReused, r.DNSLookup, r.Connecting, r.TLSHandshaking)
			}
		} else if !r.ConnReused || r.DNSLookup != 0 || r.Connecting != 0 || r.TLSHandshaking != 0 {
			t.Errorf("request %d: reused %v, dns %v, connecting %v, tls %v; want the kept-alive connection and no connection phases",
				r.Index, r.ConnReused, r.DNSLookup, r.Connecting, r.TLSHandshaking)
		}
		if p.Blocked < 0 || p.Sending < 0 || p.Waiting < 0 || p.Receiving < 0 {
			t.Errorf("request %d: a negative phase: %+v", r.Index, p)
		}
		if p.Duration() != r.Latency() {
			t.Errorf("request %d: sending + waiting + receiving = %v; want the latency %v", r.Index, p.Duration(), r.Latency())
		}
		if tot := p.Total(); tot > r.Done-r.Scheduled || tot < r.Latency()+p.DNSLookup+p.Connecting {
			t.Errorf("request %d: phases sum to %v; want within [latency + dns + connecting, done − scheduled] = [%v, %v]",
				r.Index, tot, r.Latency()+p.DNSLookup+p.Connecting, r.Done-r.Scheduled)
		}
	}
	m := out.Metrics
	if s := m.Stats[record.MetricHTTPTLSHandshaking]; s.Count != n || s.Max <= 0 || s.Min != 0 {
		t.Errorf("%s = %v; want %d values, one > 0 (the handshake) and the rest 0", record.MetricHTTPTLSHandshaking, s, n)
	}
	if got, want := m.Stats[record.MetricHTTPConnectionReused].Avg, float64(n-1)/n; got != want {
		t.Errorf("reuse rate = %v; want %v", got, want)
	}
}

// TestTLSVerification: without the CA the client refuses the throwaway certificate
// (verification is on by default); InsecureSkipVerify accepts it; a CA file that holds
// no certificate is a configuration error naming tls_ca.
func TestTLSVerification(t *testing.T) {
	_, url, _ := tlsGroundTruth(t)
	run := func(tg Target) *Outcome {
		tg.URLs = []string{url}
		out, err := Run(context.Background(), Config{Target: tg, Workload: Workload{ISL: fixed(8)}, Stop: Stop{Requests: 1}}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if r := run(Target{}).Records[0]; r.ErrorKind != record.ErrConnect || !strings.Contains(r.Error, "certificate") {
		t.Errorf("no CA: %s %q; want a connect error about the certificate", r.ErrorKind, r.Error)
	}
	if r := run(Target{InsecureSkipVerify: true}).Records[0]; !r.OK() || r.TLSHandshaking <= 0 {
		t.Errorf("insecure_skip_verify: %s %q, tls %v; want success with a handshake", r.ErrorKind, r.Error, r.TLSHandshaking)
	}
	bad := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: Target{URLs: []string{url}, TLSCA: bad}, Stop: Stop{Requests: 1}}
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "tls_ca "+bad) {
		t.Errorf("Validate() with a CA file without a certificate = %v; want an invalid config naming tls_ca %s", err, bad)
	}
}
