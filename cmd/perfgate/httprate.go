package main

import (
	"flag"
	"os"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// httpFlags are the profile flags of the time-varying rate, of https targets and of
// the client's transport.
type httpFlags struct {
	rateSeries string // --request-rate-series: a JSON file, or the JSON itself
	tlsCA      string
	insecure   bool
	transport  string
	eventLoops int
}

func registerHTTPFlags(fs *flag.FlagSet, f *httpFlags) {
	fs.StringVar(&f.rateSeries, "request-rate-series", "", `[load] open loop at a rate that varies: AIPerf's JSON file of points, {"points":[{"time_s":0,"qps":10},{"time_s":60,"qps":50}]} (or the JSON itself), linear between them; --arrival applies; without --request-count or --benchmark-duration the run ends at the last point`)
	fs.StringVar(&f.tlsCA, "tls-ca", "", "[target] PEM file of the certificate authorities an https server's certificate must chain to (default: the system's)")
	fs.BoolVar(&f.insecure, "insecure-skip-verify", false, "[target] accept any certificate from an https server, unverified (a throwaway test server only)")
	fs.StringVar(&f.transport, "transport", "", "[target] how the client sends: "+loadgen.OrList(loadgen.Transports)+" (default auto: epoll event loops where the run allows them; goroutines sends every request the goroutine way)")
	fs.IntVar(&f.eventLoops, "event-loops", 0, "[target] at most this many event loops (default one per processor)")
}

// applyHTTPFlags maps the rate series, the TLS and the transport settings onto sc.
func applyHTTPFlags(sc *scenario.Scenario, f *httpFlags, has func(...string) bool) error {
	if f.rateSeries != "" {
		if has("request-rate") {
			return invalidf("--request-rate and --request-rate-series conflict: give the rate one way")
		}
		src, b := f.rateSeries, []byte(f.rateSeries)
		if t := strings.TrimSpace(f.rateSeries); !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
			var err error
			if b, err = os.ReadFile(f.rateSeries); err != nil {
				return invalidf("--request-rate-series %s: %v", f.rateSeries, unwrapPath(err))
			}
		} else {
			src = "(inline JSON)"
		}
		s, err := loadgen.ParseRateSeries(b)
		if err != nil {
			return invalidf("--request-rate-series %s: %v", src, err)
		}
		sc.RateSeries, sc.Rate = s, 0
	}
	if f.tlsCA != "" {
		if _, err := os.Stat(f.tlsCA); err != nil {
			return invalidf("--tls-ca %s: %v", f.tlsCA, unwrapPath(err))
		}
		sc.TLSCA = f.tlsCA
	}
	if f.insecure {
		sc.InsecureSkipVerify = true
	}
	if has("transport") {
		if !slices.Contains(loadgen.Transports, f.transport) {
			return invalidf("--transport %q: want %s", f.transport, loadgen.OrList(loadgen.Transports))
		}
		sc.Transport = f.transport
	}
	if has("event-loops") {
		if f.eventLoops < 1 {
			return invalidf("--event-loops %d: want at least 1", f.eventLoops)
		}
		sc.EventLoops = f.eventLoops
	}
	return nil
}
