package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// ErrPreflight is wrapped by the errors of [Preflight]: the server cannot be reached,
// refuses the credentials, or does not serve the model.
var ErrPreflight = errors.New("scenario: preflight failed")

// Preflight timeouts: connecting, and waiting for GET /v1/models.
const (
	PreflightConnectTimeout = 3 * time.Second
	PreflightModelsTimeout  = 3 * time.Second
)

// Preflight checks, before a run against a real endpoint, that the run can do
// anything at all, so a wrong URL or model fails at once instead of as a run of
// failed requests: it connects to each of sc.URLs, then asks GET /v1/models (with the
// scenario's API key and headers) and, when the scenario names a model and the server
// lists some, checks that the model is among them. A server without /v1/models (any
// status but 401 and 403, or a body that is not a model list) passes. With no URLs
// (the in-process mock) it does nothing, and with a Server to start it does nothing
// yet: Run checks that server once it is ready. perftest.Run and `perfgate profile`
// call it; [Run] does not (but for a Server it starts). Its errors wrap [ErrPreflight]: "scenario: http://…: cannot connect:
// connection refused; is the server running?", "scenario: model "x" is not served;
// served: a, b (GET http://…/v1/models)".
func Preflight(ctx context.Context, sc scenario.Scenario) error {
	if sc.Server != nil {
		return nil // not started yet: Run checks it once it is ready
	}
	for _, raw := range sc.URLs {
		if err := preflight(ctx, sc, raw); err != nil {
			return err
		}
	}
	return nil
}

// preflight checks one of the scenario's URLs.
func preflight(ctx context.Context, sc scenario.Scenario, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: url %q: want an http(s) URL such as http://127.0.0.1:8000", ErrPreflight, raw)
	}
	d := net.Dialer{Timeout: PreflightConnectTimeout}
	c, err := d.DialContext(ctx, "tcp", hostPort(u))
	if err != nil {
		return fmt.Errorf("%w: %s: cannot connect: %v; is the server running?", ErrPreflight, raw, unwrapNet(err))
	}
	c.Close()
	served, status, err := modelsStatus(ctx, sc, u)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPreflight, raw, err)
	}
	if status != http.StatusOK {
		// No models endpoint, or the wrong base path: one request of the configured
		// kind tells them apart.
		if err := probeEndpoint(ctx, sc, raw); err != nil {
			return err
		}
	}
	for _, m := range sc.RunModels() {
		if len(served) > 0 && !slices.Contains(served, m) && !servesModel(ctx, sc, u, m) {
			return fmt.Errorf("%w: model %q is not served; served: %s (GET %s)", ErrPreflight, m, strings.Join(served, ", "), ModelsURL(u))
		}
	}
	return nil
}

// ModelsURL returns the /v1/models URL of a server given by its base URL
// ("http://h:8000", "http://h:8000/v1") or an endpoint URL ("http://h:8000/v1/chat/completions").
func ModelsURL(u *url.URL) string {
	m := *u
	m.RawQuery, m.Fragment = "", ""
	p := strings.TrimRight(m.Path, "/")
	if i := strings.Index(p+"/", "/v1/"); i >= 0 {
		p = p[:i]
	}
	m.Path = p + "/v1/models"
	m.RawPath = ""
	return m.String()
}

// listModels returns the ids GET /v1/models lists; nil when the server has no such
// list. Only refused credentials are an error.
func listModels(ctx context.Context, sc scenario.Scenario, u *url.URL) ([]string, error) {
	ids, _, err := modelsStatus(ctx, sc, u)
	return ids, err
}

// modelsStatus is listModels with the status GET /v1/models answered (0: no answer).
func modelsStatus(ctx context.Context, sc scenario.Scenario, u *url.URL) ([]string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, PreflightModelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ModelsURL(u), nil)
	if err != nil {
		return nil, 0, nil
	}
	authorize(sc, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, nil // no answer there: the run will say what the endpoint does
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, resp.StatusCode, fmt.Errorf("GET /v1/models: %s: check the API key", resp.Status)
	case http.StatusOK:
	default:
		return nil, resp.StatusCode, nil
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, resp.StatusCode, nil
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, resp.StatusCode, nil
}

// hostPort is u's host with its port, the scheme's default when it names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), map[bool]string{true: "443", false: "80"}[u.Scheme == "https"])
}

// unwrapNet returns the innermost cause of a dial error ("connection refused").
func unwrapNet(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}

// WaitForModel waits, up to timeout, until every one of sc.URLs accepts connections
// and answers GET /v1/models with 200 listing sc.Model (any model when none is named;
// a server without /v1/models, answering 404, counts as ready), polling every
// WaitForModelPoll — AIPerf's --wait-for-model-timeout, for a server still loading its
// model. Then it returns [Preflight]'s verdict. When time runs out the error wraps
// ErrPreflight and says what the server last answered. A scenario with a Server to
// start passes at once: Run waits for that server (its ReadyTimeout).
func WaitForModel(ctx context.Context, sc scenario.Scenario, timeout time.Duration) error {
	if sc.Server != nil {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		why := ""
		for _, raw := range sc.URLs {
			if why = notReady(ctx, sc, raw); why != "" {
				break
			}
		}
		if why == "" {
			return Preflight(ctx, sc)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%w: the model was not ready after %v: %s", ErrPreflight, timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(WaitForModelPoll):
		}
	}
}

// WaitForModelPoll is how often [WaitForModel] asks.
const WaitForModelPoll = 250 * time.Millisecond

// notReady says why the server at raw is not ready yet ("" when it is).
func notReady(ctx context.Context, sc scenario.Scenario, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "" // Preflight reports a bad URL
	}
	d := net.Dialer{Timeout: PreflightConnectTimeout}
	c, err := d.DialContext(ctx, "tcp", hostPort(u))
	if err != nil {
		return fmt.Sprintf("%s: cannot connect: %v", raw, unwrapNet(err))
	}
	c.Close()
	ids, status, err := modelsStatus(ctx, sc, u)
	switch {
	case err != nil:
		return "" // a credentials problem: Preflight reports it
	case status == http.StatusNotFound:
		return ""
	case status != http.StatusOK:
		return fmt.Sprintf("GET %s answered %d", ModelsURL(u), status)
	case len(sc.RunModels()) == 0 && len(ids) == 0:
		return fmt.Sprintf("GET %s lists no model yet", ModelsURL(u))
	}
	for _, m := range sc.RunModels() {
		if !slices.Contains(ids, m) {
			return fmt.Sprintf("GET %s does not list %q yet (served: %s)", ModelsURL(u), m, strings.Join(ids, ", "))
		}
	}
	return ""
}

// servesModel asks GET /v1/models/{model} (OpenAI's retrieve-model call): a server that
// serves models on demand (the mock's --any-model) answers 200 for one it does not list.
func servesModel(ctx context.Context, sc scenario.Scenario, u *url.URL, model string) bool {
	resp, err := identityGet(ctx, sc, ModelsURL(u)+"/"+url.PathEscape(model))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var m struct {
		ID string `json:"id"`
	}
	// The model object itself, not any 200 (a capture server answers everything).
	return resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&m) == nil && m.ID == model
}

// FirstServedModel returns the first model GET /v1/models lists on the scenario's
// first URL ("" when it lists none, has no URL, or has a Server not started yet: Run
// asks that server once it is ready): the model a run that names none asks for, as
// vLLM's benchmark picks it.
func FirstServedModel(ctx context.Context, sc scenario.Scenario) string {
	if len(sc.URLs) == 0 || sc.Server != nil {
		return ""
	}
	u, err := url.Parse(sc.URLs[0])
	if err != nil || u.Host == "" {
		return ""
	}
	if ids, _ := listModels(ctx, sc, u); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// probeEndpoint POSTs an empty JSON object to the URL the run's requests go to. A
// served endpoint refuses it (400, 422) or asks for credentials; 404 or 405 means
// nothing is served at that path: the base URL is wrong (http://host:port/v2), and
// every request of the run would fail.
func probeEndpoint(ctx context.Context, sc scenario.Scenario, raw string) error {
	cfg := sc.Config
	target := loadgen.TargetURL(raw, cfg.Kind())
	ctx, cancel := context.WithTimeout(ctx, PreflightModelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader("{}"))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	authorize(sc, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil // the run will say what the endpoint does
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return fmt.Errorf("%w: %s: wrong base path: GET %s and POST %s answered %s; give the server's base URL (http://HOST:PORT or http://HOST:PORT/v1)",
			ErrPreflight, raw, ModelsURL(mustParse(raw)), target, resp.Status)
	}
	return nil
}

func mustParse(raw string) *url.URL {
	u, _ := url.Parse(raw)
	return u
}
