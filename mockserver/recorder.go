package mockserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/perfgate/perfgate/record"
)

// recItem is what a handler hands to the recorder: the finished record and the input
// token ids (for the vocabulary distribution; nil if none).
type recItem struct {
	rec record.Server
	ids []int
	// synced, when set, is no record: the writer closes it once every record queued
	// before it is written (see recorder.sync).
	synced chan struct{}
}

// RejectedSuffix is appended to the recording's path to name the file of rejected
// requests (refused with a 4xx or 503 before being served): FILE.rejected.jsonl.
const RejectedSuffix = ".rejected.jsonl"

// recorder writes records off the response path. Handlers send to a bounded channel;
// when it is full they block (back-pressure), so no record is ever dropped. One
// goroutine encodes, writes and aggregates the summary. Served requests go to the
// recording, rejected ones to FILE.rejected.jsonl; with a file, nothing is kept in
// memory once its line is written (Records reads the file back). Without a file and
// with keep, records are kept in memory for [Server.Records].
type recorder struct {
	q        chan recItem
	done     chan struct{}
	path     string
	keep     bool
	mu       sync.Mutex // guards everything below (read by Records/Summary while running)
	main     *lineFile
	rej      *lineFile
	recs     []record.Server
	rejs     []record.Server
	agg      *aggregator
	err      error
	written  int
	closeOne sync.Once
	qmu      sync.RWMutex // put holds it shared; close exclusively, so no put sends on a closed queue
	closed   bool
}

// lineFile is a buffered JSON-lines file.
type lineFile struct {
	f *os.File
	w *bufio.Writer
}

func createLineFile(path string) (*lineFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &lineFile{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (l *lineFile) close() error {
	return errors.Join(l.w.Flush(), l.f.Close())
}

func newRecorder(path string, queue int, keep bool, agg *aggregator) (*recorder, error) {
	r := &recorder{q: make(chan recItem, queue), done: make(chan struct{}), path: path, keep: keep && path == "", agg: agg}
	if path != "" {
		var err error
		if r.main, err = createLineFile(path); err != nil {
			return nil, fmt.Errorf("mockserver: record file: %w", err)
		}
		if r.rej, err = createLineFile(path + RejectedSuffix); err != nil {
			r.main.close()
			return nil, fmt.Errorf("mockserver: rejected-requests file: %w", err)
		}
	}
	go r.loop()
	return r, nil
}

// put queues one record, blocking while the queue is full. After close it is a no-op
// (only a request answered after Close returned can get there).
func (r *recorder) put(it recItem) bool {
	r.qmu.RLock()
	defer r.qmu.RUnlock()
	if !r.closed {
		r.q <- it
	}
	return !r.closed
}

// sync returns once every record queued before the call is written (at once after
// close, which drains the queue): what [Server.Records] reads then holds every request
// finished before it was called.
func (r *recorder) sync() {
	done := make(chan struct{})
	if r.put(recItem{synced: done}) {
		<-done
	}
}

// The writer pushes its lines to the files at most every recordFlushEvery (and at
// least that often while any are buffered), not whenever its queue runs empty: at tens
// of thousands of requests a second that was a write system call per record. When
// records arrive faster than recordBusyRate a second it also takes them in batches,
// pausing recordPause between drains rather than being woken for each one (only with a
// queue that holds the records of a pause many times over).
const (
	recordFlushEvery = 100 * time.Millisecond
	recordBusyRate   = 10_000
	recordPause      = time.Millisecond
	recordWindow     = 10 * time.Millisecond
)

func (r *recorder) loop() {
	defer close(r.done)
	tick := time.NewTicker(recordFlushEvery)
	defer tick.Stop()
	var (
		line      []byte
		dirty     bool
		lastFlush = time.Now()
		busy      bool
		winStart  = lastFlush
		winCount  int
	)
	flush := func(now time.Time) {
		r.mu.Lock()
		if r.main != nil {
			_ = r.main.w.Flush()
			_ = r.rej.w.Flush()
		}
		r.mu.Unlock()
		dirty, lastFlush = false, now
	}
	for {
		select {
		case <-tick.C:
			if dirty {
				flush(time.Now())
			}
			continue
		case it, ok := <-r.q:
			if !ok {
				return
			}
			line = r.write(it, line)
			dirty, winCount = true, winCount+1
		}
		for drained := false; !drained; {
			select {
			case it, ok := <-r.q:
				if !ok {
					return
				}
				line = r.write(it, line)
				winCount++
			default:
				drained = true
			}
		}
		now := time.Now()
		if now.Sub(lastFlush) >= recordFlushEvery {
			flush(now)
		}
		if d := now.Sub(winStart); d >= recordWindow {
			busy = float64(winCount) >= recordBusyRate*d.Seconds()
			winStart, winCount = now, 0
		}
		if busy && cap(r.q) >= 64*recordBusyRate*int(recordPause)/int(time.Second) {
			time.Sleep(recordPause)
		}
	}
}

// write writes one record's line (buffered), keeps it when asked, and adds it to the
// summary; line is the scratch buffer, returned for reuse.
func (r *recorder) write(it recItem, line []byte) []byte {
	if it.synced != nil {
		close(it.synced)
		return line
	}
	rejected := it.rec.Rejected != ""
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.main != nil {
		lf := r.main
		line = it.rec.AppendJSON(line[:0])
		if rejected {
			lf = r.rej
			line = appendReason(line, it.rec.Rejected)
		}
		line = append(line, '\n')
		if _, err := lf.w.Write(line); err != nil && r.err == nil {
			r.err = fmt.Errorf("mockserver: write record: %w", err)
		}
	}
	r.written++
	if r.keep {
		if rejected {
			r.rejs = append(r.rejs, it.rec)
		} else {
			r.recs = append(r.recs, it.rec)
		}
	}
	r.agg.add(&it.rec, it.ids)
	return line
}

// appendReason turns the JSON object in line into one with a "reason" field too (the
// rejected-requests file's schema: a record plus its status and reason).
func appendReason(line []byte, reason string) []byte {
	line = line[:len(line)-1]
	line = append(line, `,"reason":`...)
	b, _ := json.Marshal(reason)
	line = append(line, b...)
	return append(line, '}')
}

// close drains the queue, flushes and closes the files, and writes the summary file.
func (r *recorder) close(sum func() record.ServerSummary) error {
	r.closeOne.Do(func() {
		r.qmu.Lock()
		r.closed = true
		close(r.q)
		r.qmu.Unlock()
	})
	<-r.done
	r.mu.Lock()
	if r.main == nil {
		defer r.mu.Unlock()
		return r.err
	}
	if err := errors.Join(r.main.close(), r.rej.close()); err != nil && r.err == nil {
		r.err = fmt.Errorf("mockserver: close records: %w", err)
	}
	r.main, r.rej = nil, nil
	r.mu.Unlock()
	s := sum()
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := json.MarshalIndent(s, "", "  ")
	if err == nil {
		err = os.WriteFile(r.path+".summary.json", append(b, '\n'), 0o644)
	}
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("mockserver: write summary: %w", err)
	}
	return r.err
}

// read returns the served (or rejected) records so far: read back from the file when
// there is one, else the in-memory copy (nil unless keep).
func (r *recorder) read(rejected bool) ([]record.Server, error) {
	r.sync()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path == "" {
		if rejected {
			return append([]record.Server(nil), r.rejs...), nil
		}
		return append([]record.Server(nil), r.recs...), nil
	}
	path := r.path
	if rejected {
		path += RejectedSuffix
	}
	if r.main != nil {
		if err := errors.Join(r.main.w.Flush(), r.rej.w.Flush()); err != nil {
			return nil, fmt.Errorf("mockserver: flush records: %w", err)
		}
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mockserver: read records: %w", err)
	}
	defer f.Close()
	recs, err := record.ReadServer(f)
	if err != nil {
		return recs, fmt.Errorf("mockserver: read records: %w", err)
	}
	return recs, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}
