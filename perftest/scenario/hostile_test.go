package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Hand-edited or corrupted scenario files give an error that says where, never a
// panic (issue 26: a nil callback in renamed), a stack overflow (a YAML alias cycle)
// or gigabytes (aliases expanding without limit).
func TestHostileFiles(t *testing.T) {
	for _, c := range []struct {
		file string
		want string // in the error
	}{
		{"client-number.json", `testdata/hostile/client-number.json:1:2: client: the client block is gone`},
		{"client-null.json", `testdata/hostile/client-null.json:1:2: client: the client block is gone`},
		{"client-list.json", `testdata/hostile/client-list.json:1:2: client: the client block is gone`},
		{"alias-cycle.yaml", `testdata/hostile/alias-cycle.yaml:1:11: alias *a refers to a node that contains it (line 1): an alias cycle`},
		{"billion-laughs.yaml", `testdata/hostile/billion-laughs.yaml:6:10: alias *a4: aliases expand to more than 100000 nodes (the limit)`},
		{"alias-bytes.yaml", `testdata/hostile/alias-bytes.yaml:6:30: alias *b: aliases expand to more than 4 MiB of text (the limit)`},
	} {
		t.Run(c.file, func(t *testing.T) {
			_, err := ReadFile(filepath.Join("testdata/hostile", c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalidScenario) {
				t.Errorf("ReadFile = %v\nwant an ErrInvalidScenario containing %s", err, c.want)
			}
		})
	}
}

// json.Unmarshal into a Scenario (how merges and other programs read scenario.json)
// returns an error for a client block that is not a mapping.
func TestUnmarshalJSONHostile(t *testing.T) {
	for _, in := range []string{`{"client":0}`, `{"client":null}`, `{"client":[]}`, `{"client":"x"}`, `{"endpoint":"http://a","urls":["http://b"]}`} {
		var sc Scenario
		err := json.Unmarshal([]byte(in), &sc)
		if err == nil || !strings.Contains(err.Error(), "1:2: ") {
			t.Errorf("Unmarshal(%s) = %v; want a positioned error", in, err)
		}
	}
	// An old run's client block is still read.
	var sc Scenario
	if err := json.Unmarshal([]byte(`{"client":{"endpoint":"chat","concurrency":3}}`), &sc); err != nil || sc.Concurrency != 3 || sc.API != "chat" {
		t.Errorf("old client block: %+v, %v", sc.Config, err)
	}
}

// Nesting is bounded in both syntaxes, with the limit in the message.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	if _, err := Parse([]byte(`{"name":` + deep + `}`)); err == nil || err.Error() != "input:1:108: nested more than 100 levels deep (the limit)" {
		t.Errorf("deep JSON: %v", err)
	}
	var sc Scenario
	if err := json.Unmarshal([]byte(`{"name":`+deep+`}`), &sc); err == nil {
		t.Errorf("deep JSON through UnmarshalJSON: %v", err)
	}
	p := filepath.Join(t.TempDir(), "deep.yaml")
	os.WriteFile(p, []byte("name: "+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+"\n"), 0o644)
	if _, err := ReadFile(p); err == nil || err.Error() != p+":1:106: nested more than 100 levels deep (the limit)" {
		t.Errorf("deep YAML: %v", err)
	}
	// At the limit the file is read (and then judged on its fields).
	ok := strings.Repeat("[", 98) + strings.Repeat("]", 98)
	if _, err := Parse([]byte(`{"name":` + ok + `}`)); err == nil || strings.Contains(err.Error(), "levels deep") {
		t.Errorf("98 levels: %v; want a field error, not the limit", err)
	}
}

// An 8 KB file whose 8000-byte string is aliased 6561 times (under the node limit)
// stood for 52 MB of text, which decoding wrote out and read back: 750 MiB allocated,
// and gigabytes for the run that followed. The text aliases expand to is bounded, so
// reading it stops at the limit, early and cheaply; a file just within the limit reads.
func TestAliasBytesBounded(t *testing.T) {
	const file = "testdata/hostile/alias-bytes.yaml"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadFile(file)
	runtime.ReadMemStats(&after)
	want := file + ":6:30: alias *b: aliases expand to more than 4 MiB of text (the limit)"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrInvalidScenario) {
		t.Errorf("ReadFile = %v\nwant an ErrInvalidScenario starting %s", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("ReadFile(%s) allocated %d MiB, want <= 32 MiB", file, alloc>>20)
	}

	// A 4000-byte string aliased 10 times in a, and a aliased 99 times: 1000 aliases
	// of 4000 bytes, 4,000,000 bytes, within 4 MiB (4,194,304 bytes).
	p := filepath.Join(t.TempDir(), "within.yaml")
	within := "name: x\nextra_body:\n  s: &s " + strings.Repeat("x", 4000) + "\n" +
		"  a: &a [" + strings.Repeat("*s, ", 9) + "*s]\n" +
		"  b: [" + strings.Repeat("*a, ", 98) + "*a]\n"
	os.WriteFile(p, []byte(within), 0o644)
	if sc, err := ReadFile(p); err != nil || len(sc.ExtraBody) != 3 {
		t.Errorf("ReadFile(4,000,000 bytes through aliases) = %d extra_body fields, %v; want 3, nil", len(sc.ExtraBody), err)
	}
	// Five more aliases of a (200,000 bytes) cross the limit, at the fifth.
	os.WriteFile(p, []byte(within+"  c: [*a, *a, *a, *a, *a]\n"), 0o644)
	if _, err := ReadFile(p); err == nil || !strings.HasPrefix(err.Error(), p+":6:23: alias *a: aliases expand to more than 4 MiB of text (the limit)") {
		t.Errorf("ReadFile(4,200,000 bytes through aliases) = %v; want the limit at 6:23", err)
	}
}

// A normal file with aliases (shared settings) still reads, and the expanded values
// are checked like written ones.
func TestYAMLAliasesWithinLimits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.yaml")
	os.WriteFile(p, []byte("x-rules: &rules [\"ttft_p99<=1s\"]\nname: a\n"), 0o644)
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), `unknown field "x-rules"`) {
		t.Errorf("ReadFile = %v", err)
	}
	os.WriteFile(p, []byte("name: &n a\nmodel: *n\nmock: &m {ttft_ms: \"fixed:5\"}\n"), 0o644)
	sc, err := ReadFile(p)
	if err != nil || sc.Model != "a" || sc.Name != "a" {
		t.Errorf("ReadFile = %+v, %v", sc, err)
	}
}

// A negative SLO bound in a scenario file is refused by Validate, not read as "no
// bound".
func TestValidateRefusesNegativeSLO(t *testing.T) {
	sc, err := Parse([]byte(`{"name":"x","objectives":{"slo":{"ttft":"-5ms"}},"slo":{"itl":"-1s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = sc.Validate()
	for _, want := range []string{"objectives.slo ttft -5ms: want a positive duration", "slo itl -1s: want a positive duration"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want %q", err, want)
		}
	}
}
