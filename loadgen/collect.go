package loadgen

// Collection: records flow from the requests to the sink and the outcome.

import (
	"time"

	"github.com/perfgate/perfgate/record"
)

// When records arrive faster than collectBusyRate a second, the collector takes them
// in batches, pausing collectPause between drains instead of being woken for each
// one (a goroutine wake-up per request is a visible cost at tens of thousands of
// requests a second). The rate is judged over windows of collectWindow.
const (
	collectBusyRate = 10_000
	collectPause    = time.Millisecond
	collectWindow   = 10 * time.Millisecond
)

// collect is the single goroutine that writes, sinks and summarises records, in
// completion order: senders never contend on a lock for it.
func (r *runner) collect() {
	defer close(r.collected)
	// Push buffered records out at least once a second, whether or not requests are
	// finishing, so a long run's file can be followed and a killed process loses at
	// most the last second. Run flushes the rest when it returns.
	var tick <-chan time.Time
	if r.enc != nil {
		t := time.NewTicker(RecordFlushInterval)
		defer t.Stop()
		tick = t.C
	}
	var (
		busy     bool
		winStart = time.Now()
		winCount int
	)
	for {
		select {
		case <-tick:
			_ = r.enc.Flush()
			continue
		case rec, ok := <-r.done:
			if !ok {
				return
			}
			r.collectOne(rec)
			winCount++
		}
		// Take whatever else is waiting, without blocking.
		for drained := false; !drained; {
			select {
			case rec, ok := <-r.done:
				if !ok {
					return
				}
				r.collectOne(rec)
				winCount++
			default:
				drained = true
			}
		}
		if now := time.Now(); now.Sub(winStart) >= collectWindow {
			busy = float64(winCount) >= collectBusyRate*now.Sub(winStart).Seconds()
			winStart, winCount = now, 0
		}
		if busy {
			time.Sleep(collectPause)
		}
	}
}

// collectOne writes, sinks and summarises one record, then recycles it.
func (r *runner) collectOne(rec *record.Client) {
	if rec.Index == jobEndIndex { // not a request: a job's end
		r.acc.EndJob(rec.Job)
		return
	}
	if r.enc != nil {
		_ = r.enc.Encode(rec)
	}
	r.out.Sent++
	if !rec.ISLExact && rec.RequestedISL > 0 {
		r.out.Inexact = append(r.out.Inexact, rec.Index)
	}
	if r.sink != nil {
		r.sink(*rec)
	}
	r.acc.Add(rec)
	if w := r.cfg.Watch; w != nil && !rec.Warmup {
		w.Observe(rec, r.clock.now())
	}
	if !r.cfg.DiscardRecords {
		r.out.Records = append(r.out.Records, *rec)
	}
	// Recycle the record; its Chunks array only when nobody else holds it.
	var chunks []record.Chunk
	if r.reuseChunks {
		chunks = rec.Chunks[:0]
	}
	*rec = record.Client{Chunks: chunks}
	r.recs.Put(rec)
}
