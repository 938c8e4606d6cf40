package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeFile feeds scenario files, YAML and JSON, to the decoder a user's
// --config and a run directory's scenario.json go through. Property: an error or a
// Scenario, never a panic, a stack overflow or an unbounded expansion; json.Unmarshal
// (how merges read scenario.json) holds up the same; and an accepted file's
// MarshalJSON reads back. Seeds: testdata/*.yaml and testdata/hostile/*.
func FuzzDecodeFile(f *testing.F) {
	for _, glob := range []string{"testdata/*.yaml", "testdata/hostile/*"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, strings.HasSuffix(p, ".yaml"))
		}
	}
	f.Add([]byte(`{"name":"x","concurrency":2,"duration":"3s","mock":{"ttft_ms":"fixed:5"},"objectives":{"rules":["ttft_p99<=1s"]}}`), false)
	f.Add([]byte("name: x\nisl: normal:128,20\nobjectives: {slo: {ttft: 200ms}}\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, isYAML bool) {
		sc, err := decodeFile("fuzz", data, isYAML)
		var viaJSON Scenario
		_ = json.Unmarshal(data, &viaJSON)
		if err != nil {
			return
		}
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatalf("accepted %q, but MarshalJSON: %v", data, err)
		}
		if _, err := decodeFile("fuzz", b, false); err != nil {
			t.Fatalf("accepted %q, but its JSON %s does not read back: %v", data, b, err)
		}
	})
}

// FuzzReadIndex feeds a series' index, runs.json, to the reader LoadSeries (a gate's
// baseline, `history add`) goes through. Property: an error or a series of as many
// runs as directories, at least one, whose every statistic CheckRunStat accepts; never
// a panic; and the series written back as runs.json reads back to the same runs and
// directories.
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
		if err := writeJSON(&b, s); err != nil {
			t.Fatalf("accepted %q, but writing it back: %v", data, err)
		}
		back, err := readIndex("runs.json", b.Bytes())
		if err != nil {
			t.Fatalf("accepted %q, but its runs.json %s does not read back: %v", data, b.Bytes(), err)
		}
		if !reflect.DeepEqual(back.Runs, s.Runs) || !reflect.DeepEqual(back.Dirs, s.Dirs) {
			t.Fatalf("accepted %q: read back as runs %+v dirs %q, want %+v %q", data, back.Runs, back.Dirs, s.Runs, s.Dirs)
		}
	})
}
