package liveout

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
)

// Output kinds: the part of --out before "=".
const (
	// PrometheusRW is Prometheus remote-write 1.0 (prometheus.WriteRequest, protobuf +
	// snappy), as Prometheus's --web.enable-remote-write-receiver, Mimir, Thanos and
	// VictoriaMetrics accept it. The URL is the receiver's write endpoint
	// (http://HOST:9090/api/v1/write).
	PrometheusRW = "prometheus-rw"
	// OTLP is OpenTelemetry metrics over OTLP/HTTP (protobuf). The URL is the
	// collector's metrics endpoint (http://HOST:4318/v1/metrics).
	OTLP = "otlp"
)

// Kinds lists the output kinds.
var Kinds = []string{PrometheusRW, OTLP}

// Defaults used when the corresponding Config field is zero.
const (
	// DefaultInterval is the time between two pushes (k6's default for its outputs).
	DefaultInterval = 5 * time.Second
	// DefaultBuffer is how many finished requests may wait for the aggregator before
	// [Live.Record] drops one (about 1.3 MB).
	DefaultBuffer = 1 << 14
)

// ErrInvalid is wrapped by every configuration error, and by [Start]'s error for a
// receiver that refuses the first push with a 4xx.
var ErrInvalid = errors.New("liveout: invalid output")

// Output is one destination: its kind and URL.
type Output struct {
	Kind string
	URL  string
}

// ParseOutput reads an --out value, KIND=URL ("prometheus-rw=http://127.0.0.1:9090/api/v1/write",
// "otlp=http://127.0.0.1:4318/v1/metrics"), naming what is wrong: an unknown kind, or a
// URL that is not http(s) with a host. The URL is named redacted.
func ParseOutput(spec string) (Output, error) {
	kind, raw, ok := strings.Cut(spec, "=")
	if !ok {
		return Output{}, fmt.Errorf("%w: %q: want KIND=URL with KIND %s", ErrInvalid, Redact(spec), strings.Join(Kinds, " or "))
	}
	if !slices.Contains(Kinds, kind) {
		return Output{}, fmt.Errorf("%w: unknown kind %q in %q: want %s", ErrInvalid, kind, kind+"="+Redact(raw), strings.Join(Kinds, " or "))
	}
	o := Output{Kind: kind, URL: raw}
	return o, o.Validate()
}

// MustParseOutput is [ParseOutput] that panics on an error, for literals.
func MustParseOutput(spec string) Output {
	o, err := ParseOutput(spec)
	if err != nil {
		panic(err)
	}
	return o
}

// Validate checks o's kind and URL.
func (o Output) Validate() error {
	if !slices.Contains(Kinds, o.Kind) {
		return fmt.Errorf("%w: unknown kind %q: want %s", ErrInvalid, o.Kind, strings.Join(Kinds, " or "))
	}
	u, err := url.Parse(o.URL)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s: not a URL", ErrInvalid, o)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: %s: want an http(s) URL, e.g. %s", ErrInvalid, o, example(o.Kind))
	case u.Host == "":
		return fmt.Errorf("%w: %s: no host", ErrInvalid, o)
	}
	return nil
}

func example(kind string) string {
	if kind == OTLP {
		return "http://127.0.0.1:4318/v1/metrics"
	}
	return "http://127.0.0.1:9090/api/v1/write"
}

// String returns KIND=URL with the URL redacted ([Redact]): safe to log.
func (o Output) String() string { return o.Kind + "=" + Redact(o.URL) }

// Redact returns raw with any user information dropped and every query value
// replaced by "redacted" (a receiver URL may carry a password or a token). A string
// that does not parse is returned as "[unparsable URL]".
func Redact(raw string) string { return redact.URL(raw) }

// secrets returns the parts of raw that must never be shown: the user name and
// password, and each query value, each also as it is escaped in a URL.
func secrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return []string{raw}
	}
	var out []string
	add := func(s string) {
		if len(s) >= 3 { // shorter values would redact ordinary words in messages
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
		}
	}
	return out
}

// scrub replaces every secret of raw in msg by "redacted".
func scrub(msg, raw string) string {
	for _, s := range secrets(raw) {
		msg = strings.ReplaceAll(msg, s, "redacted")
	}
	return msg
}

// Labels are the labels every series carries besides model, endpoint and class.
type Labels struct {
	// Scenario names the scenario ("scenario" label).
	Scenario string
	// Run identifies the run ("run" label), so a dashboard can tell two runs of one
	// scenario apart; the CLI makes one from the start time ([NewRunID]).
	Run string
}

// Config says where to push and how often.
type Config struct {
	Outputs []Output
	// Interval is the time between pushes; zero = DefaultInterval.
	Interval time.Duration
	// Buffer bounds the finished requests waiting for the aggregator; zero = DefaultBuffer.
	Buffer int
	Labels Labels
}

func (c Config) interval() time.Duration {
	if c.Interval <= 0 {
		return DefaultInterval
	}
	return c.Interval
}

func (c Config) buffer() int {
	if c.Buffer <= 0 {
		return DefaultBuffer
	}
	return c.Buffer
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	for _, o := range c.Outputs {
		if err := o.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("%w: interval %v: want > 0 (zero = %v)", ErrInvalid, c.Interval, DefaultInterval))
	}
	if c.Buffer < 0 {
		errs = append(errs, fmt.Errorf("%w: buffer %d: want > 0 (zero = %d)", ErrInvalid, c.Buffer, DefaultBuffer))
	}
	return errors.Join(errs...)
}

// NewRunID returns a run label from t: its UTC time to the second and four hex digits
// of its nanoseconds, "20260102T150405Z-1a2b".
func NewRunID(t time.Time) string {
	return fmt.Sprintf("%s-%04x", t.UTC().Format("20060102T150405Z"), t.Nanosecond()&0xffff)
}
