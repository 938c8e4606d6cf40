package gate

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/perfgate/perfgate/reportgen"
)

// FuzzReadIndex feeds a series' index, runs.json, to the reader LoadSeries (a gate's
// baseline, `history add`) goes through. Property: an error or a series of as many
// runs as directories, at least one, whose every statistic CheckRunStat accepts; never
// a panic; and the series written back as runs.json reads back to the same runs and
// directories, and is written again byte for byte the same.
func FuzzReadIndex(f *testing.F) {
	f.Add([]byte(`{"scenario":{"name":"x","seed":5},"runs":[{"run":1,"seed":5,"requests":30,"stats":{"ttft_p50":0.012,"output_tps":812.5,"goodput_fraction":1}}],"dirs":["run-001"]}`))
	f.Add([]byte(`{"scenario":{},"runs":[{"run":1,"stats":{"ttft_p50":0.1}},{"run":2,"stats":{}}],"dirs":["run-001","../x"]}`))
	f.Add([]byte(`{"scenario":{},"runs":[{"run":1,"stats":{"ttft_p50":-0.5}}],"dirs":["."]}`))
	f.Add([]byte(`{"scenario":{},"runs":[{"run":1,"stats":{"output_tps":1e308,"itl_p50":1e-320}}],"dirs":["."]}`))
	f.Add([]byte(`{"scenario":{},"runs":[{"run":1,"stats":{"goodput_fraction":1.5}}],"dirs":["."],"prior_cv":{"ttft_p50":0.03}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := readIndex("runs.json", data)
		if err != nil {
			return
		}
		if len(s.Runs) == 0 || len(s.Runs) != len(s.Dirs) {
			t.Fatalf("accepted %q: %d runs, %d directories", data, len(s.Runs), len(s.Dirs))
		}
		for i, r := range s.Runs {
			for name, v := range r.Stats {
				if err := CheckRunStat(name, v); err != nil {
					t.Fatalf("accepted %q: run %d: %s: %v", data, i+1, name, err)
				}
			}
		}
		var b bytes.Buffer
		if err := reportgen.WriteJSON(&b, s); err != nil {
			t.Fatalf("accepted %q, but writing it back: %v", data, err)
		}
		back, err := readIndex("runs.json", b.Bytes())
		if err != nil {
			t.Fatalf("accepted %q, but its runs.json %s does not read back: %v", data, b.Bytes(), err)
		}
		if !reflect.DeepEqual(back.Runs, s.Runs) || !reflect.DeepEqual(back.Dirs, s.Dirs) {
			t.Fatalf("accepted %q: read back as runs %+v dirs %q, want %+v %q", data, back.Runs, back.Dirs, s.Runs, s.Dirs)
		}
		var again bytes.Buffer
		if err := reportgen.WriteJSON(&again, back); err != nil || !bytes.Equal(again.Bytes(), b.Bytes()) {
			t.Fatalf("accepted %q: runs.json written, read and written again differs (%v):\n%s\n%s", data, err, b.Bytes(), again.Bytes())
		}
	})
}
