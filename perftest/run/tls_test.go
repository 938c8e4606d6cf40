package run

import (
	"context"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// TestMockTLS: a scenario whose mock serves TLS runs over https, verified with the
// mock's own certificate, and its metrics hold one TLS handshake per connection
// (one worker: the first request's) and a reused connection for the rest.
func TestMockTLS(t *testing.T) {
	cert, key := testutil.TLSCert(t)
	sc := scenario.Scenario{Name: "tls", Mock: mockserver.Config{Fast: true, TLSCert: cert, TLSKey: key},
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.Spec{Distribution: distribution.Fixed{Value: 16}}, OSL: distribution.Spec{Distribution: distribution.Fixed{Value: 4}}},
			Stop:     loadgen.Stop{Requests: 8},
		}}
	out, err := Run(context.Background(), sc, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := out.Metrics.Errors; len(n) > 0 {
		t.Fatalf("errors %v: %v", n, out.Client[0].Error)
	}
	tls := out.Metrics.Stats[record.MetricHTTPTLSHandshaking]
	if tls.Count != 8 || tls.Max <= 0 || tls.Min != 0 {
		t.Errorf("%s = %v; want 8 values, one handshake > 0 and 0 for the reused connection", record.MetricHTTPTLSHandshaking, tls)
	}
	if got := out.Metrics.Stats[record.MetricHTTPConnectionReused].Avg; got != 7.0/8 {
		t.Errorf("reuse rate %v; want 7/8", got)
	}
}
