package loadgen

// Collection: records flow from the requests to the sink and the outcome.

import (
	"time"

	"github.com/perfgate/perfgate/record"
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
	for {
		var rec *record.Client
		select {
		case <-tick:
			_ = r.enc.Flush()
			continue
		case c, ok := <-r.done:
			if !ok {
				return
			}
			rec = c
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
}
