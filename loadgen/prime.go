package loadgen

import (
	"context"
	"fmt"
	"strconv"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// primePrefix starts the request and conversation ids of priming requests.
const primePrefix = "prime-"

// requestID is request idx's X-Request-Id: "req-<idx>", or the runner's idPrefix
// and idx.
func (r *runner) requestID(idx int) string {
	if r.idPrefix != "" {
		return r.idPrefix + strconv.Itoa(idx)
	}
	return requestID(idx)
}

// prime runs the priming phase (Prefixes.PrimePrefixes): each prefix the prompts start
// with, sent once with the run's salt, target and model, asking for one output token,
// PrimeConcurrency at a time in a closed loop, before the run's clock starts. It
// returns their records, marked warm-up, each in conversation "prime-K" as its
// request id.
func (r *runner) prime(ctx context.Context) ([]record.Client, error) {
	syn, err := newSynthetic(&r.cfg, r.tok, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: prime_prefixes: %w", ErrInvalidConfig, err)
	}
	turns := syn.PrimeTurns(1)
	convs := make([]dataset.Conversation, len(turns))
	for k := range turns {
		convs[k] = dataset.Conversation{ID: primePrefix + strconv.Itoa(k), At: -1, Turns: turns[k : k+1 : k+1]}
	}
	cfg := r.cfg
	cfg.PrimePrefixes = false
	cfg.Turns, cfg.TurnDelay = distribution.Spec{}, distribution.Spec{}
	cfg.Load = Load{Concurrency: r.cfg.primeConcurrency(), CoarseTimer: r.cfg.CoarseTimer}
	cfg.Stop = Stop{Requests: len(convs), Timeout: r.cfg.Timeout, IdleTimeout: r.cfg.IdleTimeout}
	cfg.Recording = Recording{AppTimestamps: r.cfg.AppTimestamps, UsageOSL: r.cfg.UsageOSL, UsageISL: r.cfg.UsageISL, Class: r.cfg.Class}
	p, err := newRunner(ctx, cfg, r.tok, nil)
	if err != nil {
		return nil, err
	}
	closeSource(p.wl.src)
	p.wl.src, p.idPrefix = &dataset.Slice{Items: convs}, r.classPrefix+primePrefix
	p.ideal, p.priming = r.ideal, true // cached by the ideal rate's cache, not counted
	out, err := p.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("loadgen: priming: %w", err)
	}
	for i := range out.Records {
		out.Records[i].Warmup = true
		out.Records[i].Conversation = out.Records[i].RequestID // "prime-K"
	}
	return out.Records, nil
}
