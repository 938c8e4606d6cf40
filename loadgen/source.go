package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/tokenizer"
)

// DefaultISL is the input length used when Config.ISL is unset, and DefaultVLLMISL
// with CorpusVLLM (vLLM's --random-input-len default). [Workload.InputLength] is the
// one place that applies them.
const (
	DefaultISL     = 128
	DefaultVLLMISL = 1024
)

// InputLength is the input length distribution the workload sends: ISL, or when it is
// unset fixed:DefaultISL (fixed:DefaultVLLMISL for CorpusVLLM).
func (w *Workload) InputLength() distribution.Spec {
	switch {
	case w.ISL.Distribution != nil:
		return w.ISL
	case w.Corpus == CorpusVLLM:
		return distribution.Spec{Distribution: distribution.Fixed{Value: DefaultVLLMISL}}
	}
	return distribution.Spec{Distribution: distribution.Fixed{Value: DefaultISL}}
}

// DefaultBlockTokens is the mooncake hash-block size used when Config.BlockTokens is 0.
const DefaultBlockTokens = 512

// newPromptSource is the source of the run's prompts: synthetic, or an input file's.
func newPromptSource(ctx context.Context, cfg *Config, tok *tokenizer.Tokenizer) (dataset.Source, error) {
	docs := 0
	if a := adapterOf(cfg.endpoint()); a != nil && a.docs() {
		docs = cfg.Passages
		if docs == 0 {
			docs = 2
		}
	}
	if cfg.InputFile != "" {
		file, err := os.Open(cfg.InputFile)
		if err != nil {
			return nil, fmt.Errorf("%w: input file: %w", ErrInvalidConfig, err)
		}
		switch cfg.InputFormat {
		case FormatPayloads, FormatShareGPT:
			// Items are checked now; each is read from the file when it is drawn,
			// and the file is closed when the run ends.
			var src interface {
				dataset.Source
				Len() int
			}
			var err error
			if cfg.InputFormat == FormatPayloads {
				var p *dataset.Payloads
				if p, err = dataset.NewPayloads(ctxReaderAt{ctx, file}); err == nil {
					p.Cycle = !cfg.Schedule && (cfg.Requests > p.Len() || cfg.Duration > 0)
					src = p
				}
			} else {
				var g *dataset.ShareGPT
				if g, err = dataset.NewShareGPT(ctxReaderAt{ctx, file}, tok); err == nil {
					g.Cycle = !cfg.Schedule && (cfg.Requests > g.Len() || cfg.Duration > 0)
					src = g
				}
			}
			if err == nil && src.Len() == 0 {
				err = errors.New("no requests")
			}
			if err != nil {
				file.Close()
				return nil, inputError(cfg.InputFile, err)
			}
			return src, nil
		}
		if cfg.InputFormat == FormatAgentTrace {
			return newAgentSource(ctx, cfg, tok, file)
		}
		defer file.Close()
		f := ctxReader{ctx, file}
		if cfg.InputFormat == FormatMooncake {
			// Rows are read and checked now; each prompt is made when it is drawn.
			bt := cfg.BlockTokens
			if bt == 0 {
				bt = DefaultBlockTokens
			}
			m, err := dataset.NewMooncake(f, tok, bt, cfg.Seed)
			if err != nil {
				return nil, inputError(cfg.InputFile, err)
			}
			if m.Len() == 0 {
				return nil, fmt.Errorf("%w: input file %s: no requests", ErrInvalidConfig, cfg.InputFile)
			}
			m.Cycle = !cfg.Schedule && (cfg.Requests > m.Len() || cfg.Duration > 0)
			return m, nil
		}
		// A recording: each record is read now, its prompt made when it is drawn.
		rc, err := dataset.NewRecording(f, tok, cfg.Seed)
		if err == nil && rc.Len() == 0 {
			err = errors.New("no requests")
		}
		if err != nil {
			return nil, inputError(cfg.InputFile, err)
		}
		rc.Cycle = !cfg.Schedule && (cfg.Requests > rc.Len() || cfg.Duration > 0)
		return rc, nil
	}
	if cfg.Corpus == CorpusVLLM {
		inLen, inRatio, _ := vllmLen(cfg.InputLength())
		outLen, outRatio, _ := vllmLen(cfg.OSL)
		if cfg.OSL.Distribution == nil {
			outLen = 128
		}
		ratio := max(inRatio, outRatio)
		return dataset.NewVLLMRandom(dataset.VLLMRandom{
			Tok: tok, NumRequests: cfg.Requests + cfg.WarmupRequests, InputLen: inLen, OutputLen: outLen,
			RangeRatio: ratio, PrefixLen: cfg.PrefixTokens, Seed: cfg.Seed, VocabSize: cfg.VLLMVocabSize,
		})
	}
	syn, err := newSynthetic(cfg, tok, docs)
	if err != nil {
		return nil, err
	}
	if cfg.SubAgents == 0 {
		return syn, nil
	}
	return newJobSource(syn, cfg, tok, docs)
}

// newSynthetic is the run's synthetic prompt source (docs passages per turn).
func newSynthetic(cfg *Config, tok *tokenizer.Tokenizer, docs int) (*dataset.SyntheticSource, error) {
	syn := dataset.Synthetic{
		Tok: tok, Style: cfg.Corpus, PrefixTokens: cfg.PrefixTokens, Docs: docs, Seed: cfg.Seed,
		Prefixes: dataset.Prefixes{Buckets: cfg.Buckets(), Popularity: cfg.PrefixPopularity, UserContextTokens: cfg.UserContextPromptLength},
	}
	if syn.Style == CorpusShakespeare {
		syn.Style = dataset.StyleShakespeare
	}
	syn.ISL = distribution.Length{Dist: cfg.InputLength().Distribution}
	if cfg.OSL.Distribution != nil {
		syn.OSL = distribution.Length{Dist: cfg.OSL.Distribution}
	}
	if cfg.Turns.Distribution != nil {
		syn.Turns = distribution.Length{Dist: cfg.Turns.Distribution}
	}
	syn.TurnDelay = cfg.TurnDelay.Distribution
	return dataset.NewSynthetic(syn)
}

// agentSource is an agent trace's source: read as it is drawn, from a file that is
// closed when the run ends, with the jobs' starts for a fixed schedule.
type agentSource struct {
	*dataset.AgentSource
	file *os.File
	offs []time.Duration
}

func (a *agentSource) Offsets() []time.Duration { return a.offs }
func (a *agentSource) Close() error             { return a.file.Close() }

// agentOptions are cfg's settings of an agent trace's replay.
func agentOptions(cfg *Config) dataset.AgentOptions {
	o := dataset.AgentOptions{BlockTokens: cfg.BlockTokens, MaxContext: cfg.MaxContext, SampleRatio: cfg.TraceSessionSampleRatio,
		Speedup: cfg.Speedup, MaxIdleGap: cfg.MaxIdleGap, Seed: cfg.Seed}
	if o.BlockTokens == 0 {
		o.BlockTokens = DefaultBlockTokens
	}
	if o.MaxContext == 0 {
		o.MaxContext = MaxTokens
	}
	return o
}

// newAgentSource checks the whole agent trace in file before anything is sent (a bad
// line is invalid configuration naming FILE:LINE), reading it once without making
// prompts (and noting the jobs' starts, under Schedule); the run then reads it again
// as it draws the jobs.
func newAgentSource(ctx context.Context, cfg *Config, tok *tokenizer.Tokenizer, file *os.File) (dataset.Source, error) {
	o := agentOptions(cfg)
	offs, err := o.Offsets(ctxReader{ctx, file})
	if err == nil && len(offs) == 0 {
		err = errors.New("no jobs")
	}
	if err == nil {
		_, err = file.Seek(0, io.SeekStart)
	}
	if err != nil {
		file.Close()
		return nil, inputError(cfg.InputFile, err)
	}
	if !cfg.Schedule {
		offs = nil
	}
	src, err := dataset.NewAgentSource(ctxReader{ctx, file}, tok, o)
	if err != nil {
		file.Close()
		return nil, inputError(cfg.InputFile, err)
	}
	return &agentSource{AgentSource: src, file: file, offs: offs}, nil
}

// ctxReader reads r until ctx is cancelled, so reading a large input file is
// interruptible.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxReaderAt is ctxReader for an *os.File read at offsets; Close closes the file.
type ctxReaderAt struct {
	ctx context.Context
	f   *os.File
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.f.ReadAt(p, off)
}

func (c ctxReaderAt) Close() error { return c.f.Close() }

// closeSource closes a source that holds a file open (streamed payloads).
func closeSource(src dataset.Source) {
	if c, ok := src.(io.Closer); ok {
		_ = c.Close()
	}
}

// inputError is an unreadable input file as invalid configuration, found before any
// request is sent: "FILE:LINE: what is wrong" when a line is at fault.
func inputError(file string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("loadgen: reading input file %s: %w", file, err)
	}
	var le *dataset.LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%w: %s:%d: %w", ErrInvalidConfig, file, le.Line, le.Err)
	}
	return fmt.Errorf("%w: input file %s: %w", ErrInvalidConfig, file, err)
}
