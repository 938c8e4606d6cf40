package mockserver

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// TestRecordsHoldEveryFinishedRequest: the records read back hold every record queued
// before the read, in memory and on file, however far behind the writer is (a scrape
// right after a request's answer used to miss the records still in the queue).
func TestRecordsHoldEveryFinishedRequest(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "server.jsonl")} {
		t.Run(fmt.Sprintf("file=%v", path != ""), func(t *testing.T) {
			r, err := newRecorder(path, 4096, true, newAggregator(100))
			if err != nil {
				t.Fatal(err)
			}
			defer r.close(func() record.ServerSummary { return record.ServerSummary{} })
			for i := range 1000 {
				r.put(recItem{rec: record.Server{RequestID: fmt.Sprint(i), Seq: uint64(i + 1), Status: 200}})
				if i%97 == 0 {
					if recs, err := r.read(false); err != nil || len(recs) != i+1 {
						t.Fatalf("after %d records queued, read %d (%v)", i+1, len(recs), err)
					}
				}
			}
			if recs, err := r.read(false); err != nil || len(recs) != 1000 {
				t.Fatalf("read %d records (%v), want 1000", len(recs), err)
			}
		})
	}
}
