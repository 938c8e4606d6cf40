package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// classLead is how long after every class is prepared the run's clock starts: the
// open loops' first connections are made in it.
const classLead = 20 * time.Millisecond

// runClasses runs sc's classes as one run: each class one load-generator run
// ([loadgen.Prepare]), all prepared first, then started together on one clock (the
// run's start, plus each class's Start), their records shifted onto the run's clock
// (record times count from the run's start, not the class's) and written, with their
// class, into cfg.RecordFile (when set) as they finish. The outcome is the runs'
// together: the records (unless cfg.DiscardRecords), the metrics of all of them (with
// each class's in Metrics.Classes), the sums of their counts, the worst of their
// self-measurements.
//
// Several runs, not one run of several sources: each load mode (open loop, closed
// loop, an agent trace's jobs) is loadgen's own, unchanged, and a class's schedule,
// stop, workers and connections are its own, as separate clients' would be.
func runClasses(ctx context.Context, sc scenario.Scenario, cfg loadgen.Config, tok *tokenizer.Tokenizer, onRecord func(record.Client)) (*loadgen.Outcome, error) {
	var (
		mu    sync.Mutex
		enc   *record.Encoder
		file  *os.File
		kept  []record.Client
		werr  error
		start time.Time // set before any class runs
	)
	if cfg.RecordFile != "" {
		f, err := os.Create(cfg.RecordFile)
		if err != nil {
			return nil, fmt.Errorf("loadgen: record file: %w", err)
		}
		file, enc = f, record.NewEncoder(f)
		defer file.Close() // closed below; on early return, cleanup
	}
	acc := metric.NewAccumulator(metricOptions(cfg))
	if !cfg.SLO.IsZero() {
		acc.SetSLO(cfg.SLO)
	}
	if cfg.TotalsOnly {
		acc.TotalsOnly()
	}
	preps := make([]*loadgen.Prepared, 0, len(sc.Classes))
	inFlight := make([]int, len(sc.Classes)) // each class's requests in flight, under mu (offsetWatch)
	closeAll := func() {
		for _, p := range preps {
			p.Close()
		}
	}
	for i := range sc.Classes {
		off := sc.Classes[i].Start
		sink := func(rec record.Client) {
			shiftRecord(&rec, off, start)
			mu.Lock()
			defer mu.Unlock()
			if enc != nil {
				if err := enc.Encode(&rec); err != nil && werr == nil {
					werr = err
				}
			}
			acc.Add(&rec)
			if !cfg.DiscardRecords {
				kept = append(kept, rec)
			}
			if onRecord != nil {
				onRecord(rec)
			}
		}
		ccfg := sc.ClassConfig(i, cfg)
		if w := cfg.Watch; w != nil {
			ccfg.Watch = &offsetWatch{w: w, off: off, mu: &mu, i: i, inFlight: inFlight}
		}
		p, err := loadgen.Prepare(ctx, ccfg, tok, sink)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%s: %w", scenario.ClassAt(i, sc.Classes[i].Name), err)
		}
		preps = append(preps, p)
	}
	start = time.Now().Add(classLead)
	stopFlush := make(chan struct{})
	flushed := make(chan struct{})
	go func() { // records reach disk as the classes' own would: at least every RecordFlushInterval
		defer close(flushed)
		t := time.NewTicker(loadgen.RecordFlushInterval)
		defer t.Stop()
		for {
			select {
			case <-stopFlush:
				return
			case <-t.C:
				if enc != nil {
					_ = enc.Flush()
				}
			}
		}
	}()
	outs := make([]*loadgen.Outcome, len(preps))
	errs := make([]error, len(preps))
	var wg sync.WaitGroup
	for i, p := range preps {
		p.SetStart(start.Add(sc.Classes[i].Start))
		wg.Go(func() { outs[i], errs[i] = p.Run(ctx) })
	}
	wg.Wait()
	close(stopFlush)
	<-flushed
	out := mergeOutcomes(sc, outs, start)
	out.Records = kept
	out.Metrics = acc.Metrics()
	out.Jobs = acc.Jobs()
	var runErr error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil {
				runErr = errors.Join(runErr, ctx.Err())
				continue
			}
		}
		runErr = errors.Join(runErr, fmt.Errorf("%s: %w", scenario.ClassAt(i, sc.Classes[i].Name), err))
	}
	if enc != nil {
		ferr := enc.Flush()
		if err := file.Close(); ferr == nil && err != nil {
			ferr = fmt.Errorf("loadgen: record file: %w", err)
		}
		if ferr == nil {
			ferr = werr
		}
		runErr = errors.Join(runErr, ferr)
	}
	if slices.ContainsFunc(outs, func(o *loadgen.Outcome) bool { return o == nil }) && runErr != nil && ctx.Err() == nil {
		return nil, runErr
	}
	return out, runErr
}

// shiftRecord moves a class's record onto the run's clock: its times count from the
// class's start, off after the run's (start).
func shiftRecord(r *record.Client, off time.Duration, start time.Time) {
	r.RunStartUnixNano = start.UnixNano()
	if off == 0 {
		return
	}
	r.Scheduled += off
	r.Sent += off
	r.Done += off
	for _, p := range []*time.Duration{&r.FirstByte, &r.FirstOutput, &r.FirstToolCall} {
		if *p != 0 {
			*p += off
		}
	}
	for k := range r.Chunks {
		r.Chunks[k].T += off
	}
}

// offsetWatch is the run's abort watch as one class sees it: its clock is the run's
// shifted by the class's start, the classes' runs ask it from their own goroutines,
// and what it hears of requests in flight is the run's: every class's, summed.
type offsetWatch struct {
	w        loadgen.AbortWatch
	off      time.Duration
	mu       *sync.Mutex
	i        int   // the class's place in inFlight
	inFlight []int // each class's requests in flight, under mu
}

// ObserveInFlight passes on the run's requests in flight when class i has n
// ([loadgen.InFlightWatch]).
func (o *offsetWatch) ObserveInFlight(n int, now time.Duration) {
	iw, ok := o.w.(loadgen.InFlightWatch)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inFlight[o.i] = n
	total := 0
	for _, k := range o.inFlight {
		total += k
	}
	iw.ObserveInFlight(total, now+o.off)
}

func (o *offsetWatch) Observe(rec *record.Client, now time.Duration) {
	o.mu.Lock() // the sink's lock: records and the watch in one order
	defer o.mu.Unlock()
	o.w.Observe(rec, now+o.off)
}

func (o *offsetWatch) Check(now time.Duration) (loadgen.Abort, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Check(now + o.off)
}

// mergeOutcomes is the classes' outcomes as one run's (records and metrics aside):
// sums of counts, the latest end, a fingerprint over the classes' fingerprints, and
// of the self-measurements the worst send lag and read delay and the process's CPU
// and GC (measured by each run of the one process).
func mergeOutcomes(sc scenario.Scenario, outs []*loadgen.Outcome, start time.Time) *loadgen.Outcome {
	out := &loadgen.Outcome{Start: start}
	h := sha256.New()
	var modes []string
	for i, o := range outs {
		if o == nil {
			continue
		}
		name := sc.Classes[i].Name
		modes = append(modes, name+": "+o.Mode)
		out.Elapsed = max(out.Elapsed, sc.Classes[i].Start+o.Elapsed)
		out.Sent += o.Sent
		out.Interrupted = out.Interrupted || o.Interrupted
		h.Write([]byte(name + "\x00" + o.Fingerprint + "\x00"))
		out.Fingerprinted += o.Fingerprinted
		for _, w := range o.Warnings {
			out.Warnings = append(out.Warnings, fmt.Sprintf("class %s: %s", name, w))
		}
		out.StartLate = max(out.StartLate, o.StartLate)
		s, m := o.Self, &out.Self
		if s.SendLag.P99 >= m.SendLag.P99 {
			m.SendLag = s.SendLag
		}
		if s.ReadDelay.P99 >= m.ReadDelay.P99 {
			m.ReadDelay = s.ReadDelay
		}
		m.OfferedRate += s.OfferedRate
		m.AchievedRate += s.AchievedRate
		if m.Aborted == "" && s.Aborted != "" {
			m.Aborted, m.AbortedBy = fmt.Sprintf("class %s: %s", name, s.Aborted), s.AbortedBy
		}
		m.CPUSeconds, m.CPUs, m.CPUFraction = max(m.CPUSeconds, s.CPUSeconds), max(m.CPUs, s.CPUs), max(m.CPUFraction, s.CPUFraction)
		m.GCPause, m.GCPauseMax, m.GCCount = max(m.GCPause, s.GCPause), max(m.GCPauseMax, s.GCPauseMax), max(m.GCCount, s.GCCount)
		m.Elapsed = max(m.Elapsed, s.Elapsed+sc.Classes[i].Start)
	}
	out.Mode = strings.Join(modes, "; ")
	out.Fingerprint = hex.EncodeToString(h.Sum(nil))
	return out
}

// classesNeeds is what a run of classes needs of the client: the sum of what each
// class would need alone (they run at once), the fixed overheads counted once.
func classesNeeds(s scenario.Scenario) Needs {
	var n Needs
	for i := range s.Classes {
		one := s
		one.Classes = nil
		one.Config = s.ClassConfig(i, s.Config)
		c := needs(one)
		n.Conns += c.Conns
		n.Files += c.Files - LimitsFileOverhead
		n.PerAddr += c.PerAddr
		n.Memory += c.Memory - LimitsBaseMemory
		n.CPUs += c.CPUs
	}
	n.Files += LimitsFileOverhead
	n.Memory += LimitsBaseMemory
	return n
}
