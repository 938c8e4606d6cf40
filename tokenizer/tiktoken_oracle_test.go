package tokenizer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

type ttOracleReq struct {
	Encoding string         `json:"encoding,omitempty"`
	File     string         `json:"file,omitempty"`
	Special  map[string]int `json:"special_tokens,omitempty"`
	PatStr   string         `json:"pat_str,omitempty"`
	Texts    []string       `json:"texts"`
	Decode   [][]int        `json:"decode"`
}

type ttOracleResp struct {
	IDs     [][]int  `json:"ids"`
	Decoded []string `json:"decoded"`
}

// ttOracle runs tiktoken (npm, WASM) once on the whole request.
func ttOracle(t *testing.T, req ttOracleReq) ttOracleResp {
	t.Helper()
	cmd := testutil.Node(t, filepath.Join("testdata", "tiktoken", "oracle.js"))
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tiktoken oracle: %v\n%s", err, stderr.String())
	}
	var resp ttOracleResp
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("tiktoken oracle output: %v", err)
	}
	if len(resp.IDs) != len(req.Texts) || len(resp.Decoded) != len(req.Decode) {
		t.Fatalf("tiktoken oracle answered %d/%d, want %d/%d", len(resp.IDs), len(resp.Decoded), len(req.Texts), len(req.Decode))
	}
	return resp
}

// TestBuiltinMatchesTiktoken checks every built-in against OpenAI's tiktoken on a generated
// corpus (encode) and on random id sequences (decode): the match must be exact.
func TestBuiltinMatchesTiktoken(t *testing.T) {
	n := 2000
	if testutil.Short() {
		n = 200
	}
	for _, name := range Builtins() {
		t.Run(name, func(t *testing.T) {
			tok, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			n := n
			switch name {
			case "r50k_base":
				// The same embedded file as gpt2, hence the same backend: tested there.
				if g, _ := Builtin("gpt2"); g.b != tok.b {
					t.Fatal("r50k_base and gpt2 do not share their backend")
				}
				t.Skip("same backend as gpt2")
			case "p50k_edit":
				// p50k_base's ranks and pattern, plus three FIM special tokens.
				if testutil.Short() {
					t.Skip("p50k_base plus special tokens; run without -short")
				}
				n /= 5
			}
			b := tok.b.(*tiktokenBackend)
			var specials []string
			for s := range b.special {
				specials = append(specials, s)
			}
			slices.Sort(specials)
			texts := ttCorpus(uint64(len(name)), n, specials)
			// The oracle takes JS strings: give it the lossy conversion Encode makes itself.
			sent := make([]string, len(texts))
			for i, s := range texts {
				sent[i] = toValidUTF8(s)
			}
			r := rand.New(rand.NewPCG(7, uint64(len(name))))
			var valid []int
			for id := range tok.VocabSize() {
				if _, ok := tok.IDToToken(id); ok {
					valid = append(valid, id)
				}
			}
			decs := make([][]int, n/2)
			for i := range decs {
				ids := make([]int, 1+r.IntN(12))
				for j := range ids {
					ids[j] = valid[r.IntN(len(valid))]
					if r.IntN(10) == 0 {
						ids[j] = r.IntN(256) // single bytes: cut characters
					}
				}
				decs[i] = ids
			}
			want := ttOracle(t, ttOracleReq{Encoding: name, Texts: sent, Decode: decs})
			bad := 0
			for i, s := range texts {
				got := tok.Encode(s, false)
				if !slices.Equal(got, want.IDs[i]) {
					if bad++; bad <= 5 {
						t.Errorf("Encode(%s)\n got %v\nwant %v", shortQ(s), got, want.IDs[i])
					}
				}
				if c := tok.Count(s, true); c != len(want.IDs[i]) {
					t.Errorf("Count(%s, true) = %d, want %d", shortQ(s), c, len(want.IDs[i]))
				}
			}
			for i, ids := range decs {
				if got := tok.Decode(ids, false); got != want.Decoded[i] {
					if bad++; bad <= 10 {
						t.Errorf("Decode(%v) = %q, want %q", ids, got, want.Decoded[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d cases differ from tiktoken", bad, len(texts)+len(decs))
			}
		})
	}
}

func shortQ(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q…(%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func itoa(i int) string { return strconv.Itoa(i) }

// TestTiktokenOracleCanDisagree is the failure path of the differential tests: the oracle
// answers for the encoding it was asked for, so a wrong tokenizer is caught.
func TestTiktokenOracleCanDisagree(t *testing.T) {
	gpt2, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Hello world", "1234567"}
	want := ttOracle(t, ttOracleReq{Encoding: "cl100k_base", Texts: texts, Decode: [][]int{{9906}}})
	for i, s := range texts {
		if got := gpt2.Encode(s, false); slices.Equal(got, want.IDs[i]) {
			t.Errorf("gpt2 and cl100k_base agree on %q (%v): the oracle is not being consulted", s, got)
		}
	}
	if want.Decoded[0] != "Hello" {
		t.Errorf("oracle Decode([9906]) = %q, want Hello", want.Decoded[0])
	}
}
