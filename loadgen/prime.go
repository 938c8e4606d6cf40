package loadgen

import (
	"context"
	"fmt"
	"strconv"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// primePrefix starts the request and conversation ids of priming requests.
const primePrefix = "prime-"

// prime runs the priming phase (Prefixes.PrimePrefixes): each prefix the prompts start
// with, sent once with the run's salt, target and model, asking for one output token,
// PrimeConcurrency at a time in a closed loop, before the run's clock starts. It
// returns their records, marked warm-up, each in conversation "prime-K" as its
// request id. cfg, tok, classPrefix and ideal are the run's (see runner).
func prime(ctx context.Context, cfg *Config, tok *tokenizer.Tokenizer, classPrefix string, ideal *idealFeed) ([]record.Client, error) {
	syn, err := newSynthetic(cfg, tok, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: prime_prefixes: %w", ErrInvalidConfig, err)
	}
	turns := syn.PrimeTurns(1)
	convs := make([]dataset.Conversation, len(turns))
	for k := range turns {
		convs[k] = dataset.Conversation{ID: primePrefix + strconv.Itoa(k), At: -1, Turns: turns[k : k+1 : k+1]}
	}
	pc := *cfg
	pc.PrimePrefixes = false
	pc.Turns, pc.TurnDelay = distribution.Spec{}, distribution.Spec{}
	pc.Load = Load{Concurrency: cfg.primeConcurrency(), CoarseTimer: cfg.CoarseTimer}
	pc.Stop = Stop{Requests: len(convs), Timeout: cfg.Timeout, IdleTimeout: cfg.IdleTimeout}
	pc.Recording = Recording{AppTimestamps: cfg.AppTimestamps, UsageOSL: cfg.UsageOSL, UsageISL: cfg.UsageISL, Class: cfg.Class}
	p, err := newRunner(ctx, pc, tok, nil)
	if err != nil {
		return nil, err
	}
	closeSource(p.wl.src)
	p.wl.src, p.idPrefix = &dataset.Slice{Items: convs}, classPrefix+primePrefix
	p.ideal, p.priming = ideal, true // cached by the ideal rate's cache, not counted
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
