package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		sc, err := DecodeFile("fuzz", data, isYAML)
		var viaJSON Scenario
		_ = json.Unmarshal(data, &viaJSON)
		if err != nil {
			return
		}
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatalf("accepted %q, but MarshalJSON: %v", data, err)
		}
		if _, err := DecodeFile("fuzz", b, false); err != nil {
			t.Fatalf("accepted %q, but its JSON %s does not read back: %v", data, b, err)
		}
	})
}
