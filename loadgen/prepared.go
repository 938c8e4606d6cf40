package loadgen

import (
	"context"
	"time"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// Prepared is a run checked and built but not started: its configuration validated,
// its workload read or generated, its priming phase (Prefixes.PrimePrefixes) done.
// [Prepare] makes one and [Prepared.Run] runs it, which is [Run] in two halves: a
// caller that starts several runs on one clock (a scenario's traffic classes, each a
// run whose Config.StartAt is the shared start) builds them all first, so that no
// run's clock starts while another still reads its input.
type Prepared struct {
	r *runner
}

// Prepare is the first half of [Run]: everything before the run's clock starts. Its
// errors are Run's configuration and input errors. A Prepared that is not run must be
// closed ([Prepared.Close]).
func Prepare(ctx context.Context, cfg Config, tok *tokenizer.Tokenizer, sink func(record.Client)) (*Prepared, error) {
	r, err := newRunner(ctx, cfg, tok, sink)
	if err != nil {
		return nil, err
	}
	if cfg.PrimePrefixes {
		if r.primed, err = prime(ctx, &r.cfg, r.tok, r.classPrefix, r.ideal); err != nil {
			closeSource(r.wl.src)
			return nil, err
		}
	}
	return &Prepared{r: r}, nil
}

// Run is the second half of [Run]: it starts the clock (at Config.StartAt when set),
// drives the load and returns the outcome, as Run does. Call it once.
func (p *Prepared) Run(ctx context.Context) (*Outcome, error) { return p.r.run(ctx) }

// Close releases a Prepared that will not be run (its input file).
func (p *Prepared) Close() { closeSource(p.r.wl.src) }

// SetStart sets the wall-clock instant the run's clock starts (Config.StartAt), for a
// caller that learns it only once every run it starts together is prepared. Call it
// before Run.
func (p *Prepared) SetStart(t time.Time) { p.r.cfg.StartAt = t }
