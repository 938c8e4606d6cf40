package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelMixBadInput: a bad model mix is refused before any request (exit 2) with
// an error naming the flag or field.
func TestModelMixBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-names", "a,b", "--model-selection-strategy", "fastest"}, `--model-selection-strategy "fastest": want round_robin, random or weighted`},
		{[]string{"--model-names", "a,b", "--model-weights", "3,x"}, `--model-weights "3,x": "x" is not a weight`},
		{[]string{"--model-names", "a,b", "--model-weights", "3,-1"}, `--model-weights "3,-1": "-1" is not a weight`},
		{[]string{"--model-names", "a,b", "--model-weights", "3"}, "model_weights: 1 weights for 2 model_names"},
		{[]string{"--model-names", "a,b", "--model-selection-strategy", "weighted"}, "model_weights: 0 weights for 2 model_names"},
		{[]string{"--model-names", "a,,b"}, `--model-names "a,,b": an empty name`},
		{[]string{"--model-names", "a,a"}, `model_names: "a" is listed twice`},
	} {
		code, out, errOut := cli(t, append([]string{"profile", "--mock", "--request-count", "2"}, c.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q\n%s", c.args, code, errOut, ExitInvalidConfig, c.want, out)
		}
	}
}

// TestProfileModelMix: profile --mock with three model names sends round robin, and
// the client and the mock record each request's model.
func TestProfileModelMix(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--model-names", "base,lora-a,lora-b", "--request-count", "12",
		"--concurrency", "3", "--osl", "4", "--artifact-dir", art)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	names := []string{"base", "lora-a", "lora-b"}
	count := func(file string, model func(map[string]any) string) map[string]int {
		f, err := os.Open(filepath.Join(art, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := map[string]int{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			n[model(r)]++
		}
		return n
	}
	client := count("client.jsonl", func(r map[string]any) string {
		idx := int(r["index"].(float64))
		if m := r["model"].(string); m != names[idx%3] {
			t.Errorf("client record %d: model %s; want %s", idx, m, names[idx%3])
		}
		return r["model"].(string)
	})
	server := count("server.jsonl", func(r map[string]any) string { m, _ := r["model"].(string); return m })
	for _, m := range names {
		if client[m] != 4 || server[m] != 4 {
			t.Errorf("model %s: %d client and %d server records; want 4 and 4 (client %v, server %v)", m, client[m], server[m], client, server)
		}
	}
}
