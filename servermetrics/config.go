package servermetrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
	"github.com/perfgate/perfgate/record"
)

// Defaults used when the corresponding Config field is zero.
const (
	// DefaultInterval is the time between two scrapes during a run (AIPerf's default
	// collection interval too).
	DefaultInterval = time.Second
	// DefaultTimeout bounds one scrape: connect, request and reading the body.
	DefaultTimeout = 5 * time.Second
	// MaxBody bounds the size of one scrape's body; a larger one is a failed scrape.
	MaxBody = 64 << 20
)

// Artifact file names (in a run's artifact directory).
const (
	File        = "server_metrics.jsonl" // one [Scrape] per line
	SummaryFile = "server_metrics.json"  // the [Summary]
)

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("servermetrics: invalid config")

// Config says what to scrape and how often. The zero value scrapes nothing.
type Config struct {
	// URLs are the Prometheus endpoints: absolute http(s) URLs
	// ("http://127.0.0.1:8000/metrics"), or a path ("/metrics") resolved against the
	// server under test (the in-process mock included) by [Config.Resolve].
	URLs []string `json:"urls,omitempty"`
	// Interval is the time between scrapes during the run; zero = DefaultInterval.
	// JSON carries it as text ("500ms").
	Interval time.Duration `json:"interval,omitempty"`
	// Timeout bounds one scrape; zero = DefaultTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Enabled reports whether c scrapes anything.
func (c Config) Enabled() bool { return len(c.URLs) > 0 }

func (c Config) interval() time.Duration {
	if c.Interval <= 0 {
		return DefaultInterval
	}
	return c.Interval
}

func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// Validate reports every problem of c at once, each wrapping ErrInvalidConfig. A URL
// is named with its query values redacted.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...))
	}
	for _, raw := range c.URLs {
		if strings.HasPrefix(raw, "/") {
			if _, err := url.Parse(raw); err != nil {
				bad("url %q: not a path", Redact(raw))
			}
			continue
		}
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad("url %q: not a URL", Redact(raw))
		case u.Scheme != "http" && u.Scheme != "https":
			bad("url %q: want an http(s) URL such as http://127.0.0.1:8000/metrics, or a path such as /metrics", Redact(raw))
		case u.Host == "":
			bad("url %q: no host", Redact(raw))
		}
	}
	if c.Interval < 0 {
		bad("interval %v: want > 0 (zero = %v)", c.Interval, DefaultInterval)
	}
	if c.Timeout < 0 {
		bad("timeout %v: want > 0 (zero = %v)", c.Timeout, DefaultTimeout)
	}
	return errors.Join(errs...)
}

// Resolve returns c with every path URL ("/metrics") resolved against base, the
// server under test ("http://127.0.0.1:8000" or a full endpoint URL: only its
// scheme and host are kept). Absolute URLs are left as they are.
func (c Config) Resolve(base string) Config {
	b, err := url.Parse(base)
	if err != nil || b.Host == "" {
		return c
	}
	out := c
	out.URLs = make([]string, len(c.URLs))
	for i, raw := range c.URLs {
		out.URLs[i] = raw
		if strings.HasPrefix(raw, "/") {
			out.URLs[i] = b.Scheme + "://" + b.Host + raw
		}
	}
	return out
}

// Redact returns raw with every query value replaced by "redacted" and any user
// information dropped: a scrape URL may carry a token ("?token=…"), and artifacts
// never carry one. A string that does not parse is returned as "[unparsable URL]".
func Redact(raw string) string { return redact.URL(raw) }

// configJSON carries the durations as text ([record.Duration]).
type configJSON struct {
	URLs     []string        `json:"urls,omitempty"`
	Interval record.Duration `json:"interval,omitzero"`
	Timeout  record.Duration `json:"timeout,omitzero"`
}

// MarshalJSON writes c with durations as text ("1s") and URLs redacted.
func (c Config) MarshalJSON() ([]byte, error) {
	j := configJSON{Interval: record.Duration(c.Interval), Timeout: record.Duration(c.Timeout)}
	for _, u := range c.URLs {
		j.URLs = append(j.URLs, Redact(u))
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads c, durations as text ("500ms"); unknown fields are errors.
func (c *Config) UnmarshalJSON(b []byte) error {
	var j configJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("servermetrics: %w", err)
	}
	*c = Config{URLs: j.URLs, Interval: time.Duration(j.Interval), Timeout: time.Duration(j.Timeout)}
	return nil
}
