package mockserver

import (
	"io"

	"github.com/perfgate/perfgate/tokenizer"
)

// Option configures [New]. Options are applied in order; later ones win.
type Option interface{ apply(*options) }

type options struct {
	cfg  Config
	tok  *tokenizer.Tokenizer
	logw io.Writer
}

type optionFunc struct {
	name string
	f    func(*options)
}

func (o optionFunc) apply(op *options) { o.f(op) }
func (o optionFunc) String() string    { return o.name }

// WithConfig sets the whole configuration.
func WithConfig(c Config) Option {
	return optionFunc{"WithConfig", func(o *options) { o.cfg = c }}
}

// WithTokenizer uses tok instead of loading Config.Tokenizer (which is then only a
// label).
func WithTokenizer(tok *tokenizer.Tokenizer) Option {
	return optionFunc{"WithTokenizer(" + tok.Name() + ")", func(o *options) { o.tok = tok }}
}

// WithRecordFile sets Config.RecordFile.
func WithRecordFile(path string) Option {
	return optionFunc{"WithRecordFile(" + path + ")", func(o *options) { o.cfg.RecordFile = path }}
}

// WithSeed sets Config.Seed.
func WithSeed(seed uint64) Option {
	return optionFunc{"WithSeed", func(o *options) { o.cfg.Seed = seed }}
}

// WithFast zeroes all latencies (Config.Fast).
var WithFast Option = optionFunc{"WithFast", func(o *options) { o.cfg.Fast = true }}

// WithLog sends the server's log lines (start, shutdown, summary path, fatal errors)
// to w. Without it nothing is logged.
func WithLog(w io.Writer) Option {
	return optionFunc{"WithLog", func(o *options) { o.logw = w }}
}
