package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/record"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/tokenizer"
)

// ErrInvalidScenario is wrapped by the errors of a scenario that cannot run as written.
var ErrInvalidScenario = errors.New("scenario: invalid scenario")

// Run runs sc: it loads the tokenizer, starts the in-process mock server on 127.0.0.1
// when sc.Endpoint is empty, drives the load generator until the request count or
// duration is reached or ctx is done, stops the mock (so its recording is complete),
// and writes the artifacts into artifactDir ("" = write none): the client recording,
// the mock's recording and summary, the metrics, and the scenario (API key redacted).
//
// Run returns an error only if the run could not be set up or carried out (an invalid
// scenario, an unloadable tokenizer, a mock that cannot bind, an unwritable artifact
// directory). Requests that fail are part of the outcome, not errors. If ctx is
// cancelled mid-run, Run returns what was recorded so far.
func Run(ctx context.Context, sc Scenario, artifactDir string) (*Outcome, error) {
	sc = sc.withDefaults()
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	if sc.Endpoint == "" && sc.Client.URLs != nil {
		return nil, fmt.Errorf("%w: client.urls is set but endpoint is empty; set endpoint (or neither, for the mock)", ErrInvalidScenario)
	}
	tok, err := tokenizer.Load(sc.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("scenario %q: tokenizer: %w", sc.Name, err)
	}
	if artifactDir != "" {
		if err := os.MkdirAll(artifactDir, 0o755); err != nil {
			return nil, fmt.Errorf("scenario %q: artifacts: %w", sc.Name, err)
		}
	}
	out := &Outcome{Dir: artifactDir}
	url := sc.Endpoint
	var srv *mockserver.Server
	if url == "" {
		mc := sc.Mock
		mc.Host, mc.Port = "127.0.0.1", 0 // loopback only, a free port
		if artifactDir != "" && mc.RecordFile == "" {
			mc.RecordFile = filepath.Join(artifactDir, ServerFile)
		}
		opts := []mockserver.Option{mockserver.WithConfig(mc)}
		if mc.Tokenizer == sc.Tokenizer {
			opts = append(opts, mockserver.WithTokenizer(tok)) // load it once
		}
		srv, err = mockserver.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("scenario %q: mock server: %w", sc.Name, err)
		}
		if err := srv.Start(); err != nil {
			return nil, fmt.Errorf("scenario %q: mock server: %w", sc.Name, err)
		}
		defer srv.Close() // after the explicit Close below, a no-op; on early return, cleanup
		url = srv.URL()
		out.Mocked = true
		if sc.Model == "" && sc.Client.Model == "" && len(mc.Models) > 0 {
			sc.Model = mc.Models[0]
		}
	}
	cfg := sc.LoadConfig(url)
	lo, runErr := loadgen.Run(ctx, cfg, tok, nil)
	if srv != nil {
		if err := srv.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("mock server: %w", err)
		}
		out.Server = srv.Records()
		if out.Server == nil {
			out.Server = []record.Server{}
		}
	}
	if lo != nil {
		out.Client = lo.Records
		out.Metrics = lo.Metrics
	}
	if runErr != nil && lo == nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, runErr)
	}
	out.TemplateOverhead = templateOverhead(tok, cfg, lo)
	sc.Endpoint = url
	if out.Mocked {
		sc.Endpoint = "" // as written: the mock, on whatever port it had
	}
	sc.APIKey = ""
	out.Scenario = sc
	if artifactDir != "" {
		if err := out.writeArtifacts(); err != nil {
			return out, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		run := reportgen.Run{Records: out.Client, Metrics: out.Metrics, Manifest: reportgen.Manifest{
			Scenario: sc.Name, Config: sc, Seed: sc.Seed,
			Tokenizer: &reportgen.TokenizerInfo{Name: tok.Name(), Source: tok.Source(), Fingerprint: tok.Fingerprint()},
		}}
		if lo != nil {
			run.Manifest.Created, run.Cancelled = lo.Start, lo.Interrupted
		}
		files, err := reportgen.WriteExports(artifactDir, run, reportgen.ExportOptions{NoRecords: true,
			Report: reportgen.RunReportOptions{Title: "perfgate: " + sc.Name}})
		out.Files = append(out.Files, files...)
		if err != nil {
			return out, fmt.Errorf("scenario %q: reports: %w", sc.Name, err)
		}
	}
	return out, nil
}

// writeArtifacts writes the client recording, metrics and scenario into o.Dir, and
// lists them (with the mock's files) in o.Files.
func (o *Outcome) writeArtifacts() error {
	write := func(name string, f func(w io.Writer) error) error {
		p := filepath.Join(o.Dir, name)
		fh, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("artifacts: %w", err)
		}
		if err := f(fh); err != nil {
			fh.Close()
			return fmt.Errorf("artifacts: %s: %w", name, err)
		}
		if err := fh.Close(); err != nil {
			return fmt.Errorf("artifacts: %w", err)
		}
		o.Files = append(o.Files, p)
		return nil
	}
	err := write(ClientFile, func(w io.Writer) error {
		e := record.NewEncoder(w)
		for i := range o.Client {
			if err := e.Encode(&o.Client[i]); err != nil {
				return err
			}
		}
		return e.Flush()
	})
	if err != nil {
		return err
	}
	if err := write(MetricsFile, func(w io.Writer) error { return writeJSON(w, o.Metrics) }); err != nil {
		return err
	}
	if err := write(ScenarioFile, func(w io.Writer) error { return writeJSON(w, o.Scenario) }); err != nil {
		return err
	}
	err = write(VerdictsFile, func(w io.Writer) error {
		for _, v := range o.Check() {
			status := "PASS"
			if !v.Pass {
				status = "FAIL"
			}
			if _, err := fmt.Fprintf(w, "%s %s\n\n", status, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if o.Mocked {
		// The mock wrote its recording and FILE.summary.json itself.
		matches, _ := filepath.Glob(filepath.Join(o.Dir, "server*"))
		o.Files = append(o.Files, matches...)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

// templateOverhead computes, per turn, how many tokens the chat template adds around
// the message contents (the client counts contents; the server the rendering): the
// rendering of a probe conversation minus its contents' counts, with the tokenizer's
// template or, as the mock and vLLM do without one, ChatML. nil unless the endpoint is chat.
func templateOverhead(tok *tokenizer.Tokenizer, cfg loadgen.Config, lo *loadgen.Outcome) []int {
	if cfg.Endpoint != "" && cfg.Endpoint != loadgen.EndpointChat || cfg.InputFile != "" {
		return nil
	}
	turns := 1
	if lo != nil {
		for i := range lo.Records {
			turns = max(turns, lo.Records[i].Turn+1)
		}
	}
	const probe = "The quick brown fox jumps over the lazy dog" // no edge punctuation, as most cut text
	out := make([]int, turns)
	for k := range turns {
		var msgs []tokenizer.Message
		contents := 0
		if cfg.SystemPrompt != "" || cfg.PrefixTokens > 0 {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: probe})
			contents += tok.Count(probe, false)
		}
		for j := range 2*k + 1 {
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			msgs = append(msgs, tokenizer.Message{Role: role, Content: probe})
			contents += tok.Count(probe, false)
		}
		var n int
		if tok.HasChatTemplate() {
			s, err := tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true})
			if err != nil {
				return nil
			}
			n = tok.Count(s, false)
		} else {
			n = tok.Count(tokenizer.RenderChatMLFallback(msgs, true), false)
		}
		out[k] = n - contents
	}
	return out
}
