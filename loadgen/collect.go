package loadgen

// Collection: records flow from the requests to the sink and the outcome.

import (
	"sync"
	"time"

	"github.com/perfgate/perfgate/metric"
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

// collector is the single goroutine that writes (enc), sinks and summarises (acc,
// out, watch) a run's records, in completion order, as they come in: senders never
// contend on a lock for it. It recycles each record into recs once done with it.
type collector struct {
	in        <-chan *record.Client
	collected chan<- struct{} // closed once in is closed and drained
	enc       *record.Encoder // the record file's; nil = none
	sink      func(record.Client)
	acc       *metric.Accumulator
	watch     AbortWatch // Stop.Watch; nil = none
	clock     *runClock
	out       *Outcome // Sent, Inexact, and Records unless discard
	discard   bool     // Config.DiscardRecords
	// reuseChunks: records are neither kept nor given to a sink, so a recycled
	// record's Chunks array can be reused.
	reuseChunks bool
	recs        *sync.Pool
}

// collect takes records until in closes.
func (c *collector) collect() {
	defer close(c.collected)
	// Push buffered records out at least once a second, whether or not requests are
	// finishing, so a long run's file can be followed and a killed process loses at
	// most the last second. Run flushes the rest when it returns.
	var tick <-chan time.Time
	if c.enc != nil {
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
			_ = c.enc.Flush()
			continue
		case rec, ok := <-c.in:
			if !ok {
				return
			}
			c.collectOne(rec)
			winCount++
		}
		// Take whatever else is waiting, without blocking.
		for drained := false; !drained; {
			select {
			case rec, ok := <-c.in:
				if !ok {
					return
				}
				c.collectOne(rec)
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
func (c *collector) collectOne(rec *record.Client) {
	if rec.Index == jobEndIndex { // not a request: a job's end
		c.acc.EndJob(rec.Job)
		return
	}
	if c.enc != nil {
		_ = c.enc.Encode(rec)
	}
	c.out.Sent++
	if !rec.ISLExact && rec.RequestedISL > 0 {
		c.out.Inexact = append(c.out.Inexact, rec.Index)
	}
	if c.sink != nil {
		c.sink(*rec)
	}
	c.acc.Add(rec)
	if w := c.watch; w != nil && !rec.Warmup {
		w.Observe(rec, c.clock.now())
	}
	if !c.discard {
		c.out.Records = append(c.out.Records, *rec)
	}
	// Recycle the record; its Chunks array only when nobody else holds it.
	var chunks []record.Chunk
	if c.reuseChunks {
		chunks = rec.Chunks[:0]
	}
	*rec = record.Client{Chunks: chunks}
	c.recs.Put(rec)
}
