package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// recordingSeeds adds testdata/recordings/*.jsonl and a recording written by the
// encoders, whole and cut short.
func recordingSeeds(f *testing.F) {
	paths, _ := filepath.Glob("testdata/recordings/*.jsonl")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	c, s := sample(), Server{Seq: 1, Endpoint: "/v1/chat/completions", Status: 200, ISL: 5, Model: "m\"é"}
	file := append(append(c.AppendJSON(nil), '\n'), s.AppendJSON(nil)...)
	f.Add(append(file, '\n'))
	f.Add(file[:len(file)-7])
}

// FuzzEachClient feeds whole client recordings (what `perfgate report`, merge and
// perftest.Load read back) to EachClient. Property: it gives fn one record per line
// until the first line encoding/json refuses, whose number its error names, wrapping
// ErrTruncated exactly when that line is the last and has no newline.
func FuzzEachClient(f *testing.F) {
	recordingSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := EachClient(bytes.NewReader(data), func(*Client) error { n++; return nil })
		// The oracle: encoding/json line by line.
		lines := bytes.SplitAfter(data, []byte("\n"))
		want, bad, last := 0, 0, false
		for i, l := range lines {
			t := bytes.TrimSpace(l)
			if len(t) == 0 {
				continue
			}
			var c Client
			if json.Unmarshal(t, &c) != nil {
				bad, last = i+1, i == len(lines)-1 && !bytes.HasSuffix(l, []byte("\n"))
				break
			}
			want++
		}
		if n != want || (err == nil) != (bad == 0) {
			t.Fatalf("EachClient(%q) gave %d records, error %v; encoding/json reads %d before line %d", data, n, err, want, bad)
		}
		if err != nil && errors.Is(err, ErrTruncated) != last {
			t.Fatalf("EachClient(%q) = %v; the bad line %d is the unterminated last: %v", data, err, bad, last)
		}
	})
}

// FuzzReadServer feeds server recordings to ReadServer. Property: an error, or records
// that AppendJSON writes back as lines ReadServer reads to the same records.
func FuzzReadServer(f *testing.F) {
	recordingSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadServer(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out []byte
		for i := range recs {
			out = append(recs[i].AppendJSON(out), '\n')
		}
		back, err := ReadServer(bytes.NewReader(out))
		if err != nil || len(back) != len(recs) {
			t.Fatalf("ReadServer(%q) = %d records, written back as %q: %d, %v", data, len(recs), out, len(back), err)
		}
		for i := range recs {
			a, _ := json.Marshal(recs[i])
			b, _ := json.Marshal(back[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("record %d of %q: %s reads back as %s", i, data, a, b)
			}
		}
	})
}
