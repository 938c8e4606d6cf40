package mockserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/perfgate/perfgate/record"
)

// recItem is what a handler hands to the recorder: the finished record and the input
// token ids (for the vocabulary distribution; nil if none).
type recItem struct {
	rec record.Server
	ids []int
}

// recorder writes records off the response path. Handlers send to a bounded channel;
// when it is full they block (back-pressure), so no record is ever dropped. One
// goroutine encodes, writes and aggregates the summary.
type recorder struct {
	q        chan recItem
	done     chan struct{}
	file     *os.File
	w        *bufio.Writer
	path     string
	keep     bool
	mu       sync.Mutex // guards recs, agg, err (read by Records/Summary while running)
	recs     []record.Server
	agg      *aggregator
	err      error
	written  int
	closeOne sync.Once
	qmu      sync.RWMutex // put holds it shared; close exclusively, so no put sends on a closed queue
	closed   bool
}

func newRecorder(path string, queue int, keep bool, agg *aggregator) (*recorder, error) {
	r := &recorder{q: make(chan recItem, queue), done: make(chan struct{}), path: path, keep: keep, agg: agg}
	if path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("mockserver: record file: %w", err)
		}
		r.file, r.w = f, bufio.NewWriterSize(f, 256<<10)
	}
	go r.loop()
	return r, nil
}

// put queues one record, blocking while the queue is full. After close it is a no-op
// (only a request answered after Close returned can get there).
func (r *recorder) put(it recItem) {
	r.qmu.RLock()
	defer r.qmu.RUnlock()
	if !r.closed {
		r.q <- it
	}
}

func (r *recorder) loop() {
	defer close(r.done)
	var line []byte
	for it := range r.q {
		if r.w != nil {
			line = it.rec.AppendJSON(line[:0])
			line = append(line, '\n')
			if _, err := r.w.Write(line); err != nil && r.err == nil {
				r.mu.Lock()
				r.err = fmt.Errorf("mockserver: write record: %w", err)
				r.mu.Unlock()
			}
			// Keep the file current when the queue is idle, so a crash loses little.
			if len(r.q) == 0 {
				_ = r.w.Flush()
			}
		}
		r.mu.Lock()
		r.written++
		if r.keep {
			r.recs = append(r.recs, it.rec)
		}
		r.agg.add(&it.rec, it.ids)
		r.mu.Unlock()
	}
}

// close drains the queue, flushes and closes the file, and writes the summary file.
func (r *recorder) close(sum func() record.ServerSummary) error {
	r.closeOne.Do(func() {
		r.qmu.Lock()
		r.closed = true
		close(r.q)
		r.qmu.Unlock()
	})
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file == nil {
		return r.err
	}
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = fmt.Errorf("mockserver: flush records: %w", err)
	}
	if err := r.file.Close(); err != nil && r.err == nil {
		r.err = fmt.Errorf("mockserver: close records: %w", err)
	}
	r.file = nil
	r.mu.Unlock()
	s := sum()
	r.mu.Lock()
	b, err := json.MarshalIndent(s, "", "  ")
	if err == nil {
		err = os.WriteFile(r.path+".summary.json", append(b, '\n'), 0o644)
	}
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("mockserver: write summary: %w", err)
	}
	return r.err
}

func (r *recorder) records() []record.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record.Server(nil), r.recs...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}
