package run

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/reportgen"
)

// Pins are what a run measured with, kept in its manifest and in validity.json (so
// `perfgate report` shows the run's, not its own): perfgate's VCS revision, the
// dataset fingerprint, the servers' identity and the topology.
type Pins struct {
	VCS      *reportgen.VCS      `json:"vcs,omitempty"`
	Dataset  *reportgen.Dataset  `json:"dataset,omitempty"`
	Servers  []reportgen.Server  `json:"servers,omitempty"`
	Topology *reportgen.Topology `json:"topology,omitempty"`
}

// identifyTimeout bounds each identity request.
const identifyTimeout = 2 * time.Second

// Identify asks each server for its identity (the Server header of GET /v1/models,
// GET /version, the *_info gauges of metricsURL when given) and measures the topology
// (the servers' addresses as resolved, the TCP connect time to the first as its RTT).
// Nothing it fails to learn is an error: that field stays empty. [Run] does it in two
// halves: the connect and GET /v1/models (what a preflight sends) before the load, the
// rest after it, so a run refused before its first request sent nothing else.
func Identify(ctx context.Context, sc scenario.Scenario, urls []string, metricsURL string) ([]reportgen.Server, *reportgen.Topology) {
	servers, topo := identifyBefore(ctx, sc, urls)
	identifyAfter(ctx, sc, servers, metricsURL)
	return servers, topo
}

// identifyBefore connects to each server (its resolved address; the first's connect
// time is the RTT) and reads the Server header of GET /v1/models.
func identifyBefore(ctx context.Context, sc scenario.Scenario, urls []string) ([]reportgen.Server, *reportgen.Topology) {
	topo := &reportgen.Topology{Shards: max(sc.Shards, 1)}
	topo.ClientHost, _ = os.Hostname()
	var servers []reportgen.Server
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			continue
		}
		s := reportgen.Server{URL: raw}
		d := net.Dialer{Timeout: identifyTimeout}
		t0 := time.Now()
		if c, err := d.DialContext(ctx, "tcp", hostPort(u)); err == nil {
			if i == 0 {
				topo.RTT = time.Since(t0)
			}
			topo.Addrs = append(topo.Addrs, c.RemoteAddr().String())
			c.Close()
		}
		if resp, err := identityGet(ctx, sc, ModelsURL(u)); err == nil {
			s.Header = resp.Header.Get("Server")
			resp.Body.Close()
		}
		servers = append(servers, s)
	}
	return servers, topo
}

// identifyAfter asks each server for GET /version, and the first for the build info
// of its /metrics (metricsURL, "" = not scraped).
func identifyAfter(ctx context.Context, sc scenario.Scenario, servers []reportgen.Server, metricsURL string) {
	for i := range servers {
		s := &servers[i]
		u, err := url.Parse(s.URL)
		if err != nil {
			continue
		}
		if resp, err := identityGet(ctx, sc, baseURL(u)+"/version"); err == nil {
			if resp.StatusCode == http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				s.Version = strings.TrimSpace(string(b))
			}
			resp.Body.Close()
		}
		if i == 0 && metricsURL != "" {
			s.Build = buildInfo(ctx, sc, metricsURL)
		}
	}
}

// baseURL is u's scheme and host with the path before /v1.
func baseURL(u *url.URL) string {
	m := strings.TrimSuffix(ModelsURL(u), "/v1/models")
	return m
}

func identityGet(ctx context.Context, sc scenario.Scenario, target string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, identifyTimeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	authorize(sc, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{resp.Body, cancel}
	return resp, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error { err := b.ReadCloser.Close(); b.cancel(); return err }

// apiKey is the key the scenario sends, from APIKey or APIKeyEnv.
// authorize sets the scenario's extra headers and its API key (as a bearer token) on a
// request perfgate sends outside the load: preflight, identity probes, the reset hook.
func authorize(s scenario.Scenario, req *http.Request) {
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	if key := apiKey(s); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
}

func apiKey(s scenario.Scenario) string {
	if s.APIKey != "" {
		return string(s.APIKey)
	}
	if s.APIKeyEnv != "" {
		return os.Getenv(s.APIKeyEnv)
	}
	return ""
}

// buildInfo reads the labels of the *_info series of a Prometheus exposition (the
// first series of each), as "metric.label" → value: vLLM's cache_config_info,
// python_info, a server's build_info.
func buildInfo(ctx context.Context, sc scenario.Scenario, metricsURL string) map[string]string {
	resp, err := identityGet(ctx, sc, metricsURL)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	out := map[string]string{}
	seen := map[string]bool{}
	sc2 := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc2.Buffer(make([]byte, 64<<10), 1<<20)
	for sc2.Scan() {
		line := sc2.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasSuffix(name, "_info") || seen[name] {
			continue
		}
		seen[name] = true
		labels, _, _ := strings.Cut(rest, "}")
		for _, kv := range splitLabels(labels) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				out[name+"."+k] = strings.Trim(v, `"`)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// splitLabels splits a label list at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	in, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			in = !in
		case ',':
			if !in {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// ResetPath is the path of vLLM's (and the mock's) prefix-cache reset endpoint.
const ResetPath = "/reset_prefix_cache"

// resetURLs are the URLs to POST to before a run: v.ResetURL, or with v.ResetKVCache
// each target's ResetPath on its scheme and host.
func resetURLs(v validity.Config, targets []string) []string {
	if v.ResetURL != "" {
		return []string{v.ResetURL}
	}
	if !v.ResetKVCache {
		return nil
	}
	var out []string
	for _, t := range targets {
		if u, err := url.Parse(t); err == nil && u.Host != "" {
			out = append(out, u.Scheme+"://"+u.Host+ResetPath)
		}
	}
	return out
}

// ErrReset is wrapped by the error of a cache reset hook that failed.
var ErrReset = errors.New("scenario: cache reset failed")

// resetCache POSTs to the reset hook (Validity.ResetURL) and wants a 2xx answer.
func resetCache(ctx context.Context, sc scenario.Scenario, target string) error {
	ctx, cancel := context.WithTimeout(ctx, PreflightModelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrReset, target, err)
	}
	authorize(sc, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: POST %s: %v", ErrReset, target, unwrapNet(err))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: POST %s answered %s (vLLM serves /reset_prefix_cache only with VLLM_SERVER_DEV_MODE=1)", ErrReset, target, resp.Status)
	}
	return nil
}
