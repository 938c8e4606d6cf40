package servermetrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Phases of a scrape relative to the run.
const (
	PhaseBefore = "before" // once, before the first request
	PhaseDuring = "during" // every Config.Interval while the run goes on
	PhaseAfter  = "after"  // once, after the last request finished
)

// Sample types, as the exposition format's TYPE line gives them. A histogram or a
// summary is flattened into its _bucket/quantile, _sum and _count lines, each with
// the family's type.
const (
	TypeCounter   = "counter"
	TypeGauge     = "gauge"
	TypeHistogram = "histogram"
	TypeSummary   = "summary"
	TypeUntyped   = "untyped"
)

// Sample is one line of an exposition: a series' name, labels, type and value.
type Sample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Type   string            `json:"type"`
	Value  float64           `json:"value"`
	// TimestampMs is the sample's own timestamp, in Unix milliseconds, when the
	// exposition gives one (0 = none: the scrape's time).
	TimestampMs int64 `json:"timestamp_ms,omitempty"`
}

// Scrape is one scrape of one URL: a line of server_metrics.jsonl.
type Scrape struct {
	// URL is the scraped URL, query values redacted (see [Redact]).
	URL string `json:"url"`
	// Phase is PhaseBefore, PhaseDuring or PhaseAfter.
	Phase string `json:"phase"`
	// UnixNano is when the scrape started; DurationNS how long it took.
	UnixNano   int64 `json:"unix_nano"`
	DurationNS int64 `json:"duration_ns"`
	// Error says why the scrape failed ("" = it did not); Samples is then empty.
	Error   string   `json:"error,omitempty"`
	Samples []Sample `json:"samples,omitempty"`
}

// Scraper scrapes Config.URLs before, during and after a run. It is made by [Start]
// and ended by [Scraper.Stop].
type Scraper struct {
	cfg    Config
	client *http.Client
	w      io.Writer
	enc    *json.Encoder
	mu     sync.Mutex // enc, acc, werr
	acc    *Accumulator
	werr   error
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ctx    context.Context
	see    func(Scrape)
}

// Start validates cfg, scrapes every URL once (PhaseBefore, concurrently, waiting
// for all), then scrapes each every cfg.Interval until [Scraper.Stop]. Each scrape
// is written to w as a JSON line (w may be nil: the summary is still kept). ctx
// bounds every scrape, the final one too. Only an invalid cfg is an error: a
// scrape that fails is recorded.
func Start(ctx context.Context, cfg Config, w io.Writer) (*Scraper, error) {
	return StartObserved(ctx, cfg, w, nil)
}

// StartObserved is [Start] with observe, if not nil, called with each scrape as it
// is recorded (one call at a time): how GPU telemetry ([GPUAccumulator.Add]) reads
// the same scrapes.
func StartObserved(ctx context.Context, cfg Config, w io.Writer, observe func(Scrape)) (*Scraper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, u := range cfg.URLs {
		if u != "" && u[0] == '/' {
			return nil, fmt.Errorf("%w: url %q: a path needs Config.Resolve with the server's URL first", ErrInvalidConfig, u)
		}
	}
	s := &Scraper{cfg: cfg, client: &http.Client{Timeout: cfg.timeout()}, w: w, acc: NewAccumulator(), ctx: ctx, see: observe}
	if w != nil {
		s.enc = json.NewEncoder(w)
	}
	s.all(PhaseBefore)
	tctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	for _, u := range cfg.URLs {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTicker(cfg.interval())
			defer t.Stop()
			for {
				select {
				case <-tctx.Done():
					return
				case <-t.C:
					sc := s.scrape(tctx, u, PhaseDuring)
					if sc.Error != "" && tctx.Err() != nil {
						return // cut short by Stop, not a failure of the server
					}
					s.record(sc)
				}
			}
		}()
	}
	return s, nil
}

// Stop ends the periodic scrapes, scrapes every URL once more (PhaseAfter) and
// returns the summary of every scrape. The error is the first write error of the
// JSON lines, if any. Stop must be called once.
func (s *Scraper) Stop() (Summary, error) {
	s.cancel()
	s.wg.Wait()
	s.all(PhaseAfter)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acc.Summary(), s.werr
}

func (s *Scraper) all(phase string) {
	var wg sync.WaitGroup
	res := make([]Scrape, len(s.cfg.URLs))
	for i, u := range s.cfg.URLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = s.scrape(s.ctx, u, phase)
		}()
	}
	wg.Wait()
	for _, r := range res {
		s.record(r) // in URL order, so a file's before/after lines are deterministic
	}
}

func (s *Scraper) record(sc Scrape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acc.Add(sc)
	if s.see != nil {
		s.see(sc)
	}
	if s.enc != nil && s.werr == nil {
		if err := s.enc.Encode(sc); err != nil {
			s.werr = fmt.Errorf("servermetrics: write: %w", err)
		}
	}
}

// scrape fetches and parses one URL; every failure is in the Scrape's Error.
func (s *Scraper) scrape(ctx context.Context, raw, phase string) Scrape {
	start := time.Now()
	sc := Scrape{URL: Redact(raw), Phase: phase, UnixNano: start.UnixNano()}
	samples, err := s.fetch(ctx, raw)
	sc.DurationNS = int64(time.Since(start))
	if err != nil {
		sc.Error = err.Error()
		return sc
	}
	sc.Samples = samples
	return sc
}

func (s *Scraper) fetch(ctx context.Context, raw string) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, fmt.Errorf("servermetrics: %s: %w", Redact(raw), err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap() // *url.Error repeats the URL with its query: drop it
		}
		return nil, fmt.Errorf("servermetrics: GET %s: %v", Redact(raw), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("servermetrics: GET %s: HTTP %d", Redact(raw), resp.StatusCode)
	}
	body := io.LimitReader(resp.Body, MaxBody+1)
	samples, n, err := Parse(body)
	if err != nil {
		return nil, fmt.Errorf("servermetrics: %s: %w", Redact(raw), err)
	}
	if n > MaxBody {
		return nil, fmt.Errorf("servermetrics: %s: body larger than %d bytes", Redact(raw), MaxBody)
	}
	return samples, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Parse reads the Prometheus text exposition format (with expfmt, names validated
// as UTF-8, so vLLM's "vllm:…" names pass) and flattens it into samples, sorted by
// name and labels. It also returns the bytes read.
func Parse(r io.Reader) ([]Sample, int64, error) {
	cr := &countingReader{r: r}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(cr)
	if err != nil {
		return nil, cr.n, fmt.Errorf("parse: %w", err)
	}
	var out []Sample
	for name, f := range fams {
		out = appendFamily(out, name, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return seriesKey("", out[i].Labels) < seriesKey("", out[j].Labels)
	})
	return out, cr.n, nil
}

func appendFamily(out []Sample, name string, f *dto.MetricFamily) []Sample {
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		with := func(k, v string) map[string]string {
			c := make(map[string]string, len(labels)+1)
			for a, b := range labels {
				c[a] = b
			}
			c[k] = v
			return c
		}
		add := func(n string, ls map[string]string, typ string, v float64) {
			if len(ls) == 0 {
				ls = nil
			}
			out = append(out, Sample{Name: n, Labels: ls, Type: typ, Value: v, TimestampMs: m.GetTimestampMs()})
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			add(name, labels, TypeCounter, m.GetCounter().GetValue())
		case dto.MetricType_GAUGE:
			add(name, labels, TypeGauge, m.GetGauge().GetValue())
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			inf := false
			for _, b := range h.GetBucket() {
				inf = inf || math.IsInf(b.GetUpperBound(), 1)
				add(name+"_bucket", with("le", formatFloat(b.GetUpperBound())), TypeHistogram, float64(b.GetCumulativeCount()))
			}
			if !inf {
				add(name+"_bucket", with("le", "+Inf"), TypeHistogram, float64(h.GetSampleCount()))
			}
			add(name+"_sum", labels, TypeHistogram, h.GetSampleSum())
			add(name+"_count", labels, TypeHistogram, float64(h.GetSampleCount()))
		case dto.MetricType_SUMMARY:
			sm := m.GetSummary()
			for _, q := range sm.GetQuantile() {
				add(name, with("quantile", formatFloat(q.GetQuantile())), TypeSummary, q.GetValue())
			}
			add(name+"_sum", labels, TypeSummary, sm.GetSampleSum())
			add(name+"_count", labels, TypeSummary, float64(sm.GetSampleCount()))
		default:
			add(name, labels, TypeUntyped, m.GetUntyped().GetValue())
		}
	}
	return out
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
