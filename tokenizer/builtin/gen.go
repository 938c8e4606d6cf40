//go:build ignore

// gen converts the tiktoken encodings shipped in the tiktoken npm package (MIT licensed;
// encoders/*.json hold bpe_ranks in base64 plus pat_str and special_tokens) into the
// compact files embedded by tokenizer/builtin.go.
//
// Usage, from tokenizer/builtin:
//
//	go run gen.go [-src ~/.cache/perfgate/npm/node_modules/tiktoken/encoders]
//
// File format (then compressed with bzip2 -9, which the standard library can decompress):
//
//	"PGTT1\n"
//	str   base      name of an encoding whose ranks come first ("" for none)
//	str   pattern   the split regex (pat_str)
//	uvar  nSpecial, then nSpecial × (str token, uvar id)
//	uvar  explicit vocabulary size (0 if unset)
//	uvar  nSegments, then nSegments × (uvar firstRank, uvar n, n × str token)
//
// where str is a uvarint length followed by the bytes. Ranks inside a segment are
// consecutive, so rank numbers are not stored.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

type encoding struct {
	ExplicitNVocab int            `json:"explicit_n_vocab"`
	PatStr         string         `json:"pat_str"`
	SpecialTokens  map[string]int `json:"special_tokens"`
	BPERanks       string         `json:"bpe_ranks"`
}

type segment struct {
	first  int
	tokens [][]byte
}

func parse(e *encoding) ([]segment, error) {
	var segs []segment
	for line := range strings.SplitSeq(e.BPERanks, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) < 2 || f[0] != "!" {
			return nil, fmt.Errorf("bad bpe_ranks line %.40q", line)
		}
		first, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, err
		}
		s := segment{first: first}
		for _, b := range f[2:] {
			tok, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return nil, fmt.Errorf("rank %d: %v", first+len(s.tokens), err)
			}
			s.tokens = append(s.tokens, tok)
		}
		segs = append(segs, s)
	}
	return segs, nil
}

func main() {
	home, _ := os.UserHomeDir()
	src := flag.String("src", filepath.Join(home, ".cache/perfgate/npm/node_modules/tiktoken/encoders"), "tiktoken npm encoders directory")
	out := flag.String("out", ".", "output directory")
	flag.Parse()

	load := func(name string) *encoding {
		b, err := os.ReadFile(filepath.Join(*src, name+".json"))
		if err != nil {
			log.Fatal(err)
		}
		var e encoding
		if err := json.Unmarshal(b, &e); err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		return &e
	}
	// gpt2 is r50k_base under another name; check that and embed it once.
	gpt2, r50k := load("gpt2"), load("r50k_base")
	if gpt2.BPERanks != r50k.BPERanks || gpt2.PatStr != r50k.PatStr || len(gpt2.SpecialTokens) != 1 {
		log.Fatal("gpt2 and r50k_base differ; give gpt2 its own file")
	}
	for _, name := range []string{"r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"} {
		e := load(name)
		segs, err := parse(e)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		base := ""
		// p50k_base extends r50k_base's ranks; p50k_edit has p50k_base's ranks.
		switch name {
		case "p50k_base", "p50k_edit":
			base = map[string]string{"p50k_base": "r50k_base", "p50k_edit": "p50k_base"}[name]
			bsegs, err := parse(load(base))
			if err != nil {
				log.Fatal(err)
			}
			segs, err = strip(segs, bsegs)
			if err != nil {
				log.Fatalf("%s over %s: %v", name, base, err)
			}
		}
		var buf bytes.Buffer
		buf.WriteString("PGTT1\n")
		str := func(s []byte) { buf.Write(binary.AppendUvarint(nil, uint64(len(s)))); buf.Write(s) }
		uv := func(v int) { buf.Write(binary.AppendUvarint(nil, uint64(v))) }
		str([]byte(base))
		str([]byte(e.PatStr))
		uv(len(e.SpecialTokens))
		for _, k := range slices.Sorted(maps.Keys(e.SpecialTokens)) {
			str([]byte(k))
			uv(e.SpecialTokens[k])
		}
		uv(e.ExplicitNVocab)
		uv(len(segs))
		n := 0
		for _, s := range segs {
			uv(s.first)
			uv(len(s.tokens))
			for _, t := range s.tokens {
				str(t)
			}
			n += len(s.tokens)
		}
		cmd := exec.Command("bzip2", "-9c")
		cmd.Stdin = &buf
		cmd.Stderr = os.Stderr
		z, err := cmd.Output()
		if err != nil {
			log.Fatalf("bzip2: %v", err)
		}
		path := filepath.Join(*out, name+".bpe.bz2")
		if err := os.WriteFile(path, z, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d ranks (base %q), %d specials, %d bytes\n", path, n, base, len(e.SpecialTokens), len(z))
	}
}

// strip removes from segs the ranks that bsegs already holds (identically).
func strip(segs, bsegs []segment) ([]segment, error) {
	have := map[int][]byte{}
	for _, s := range bsegs {
		for i, t := range s.tokens {
			have[s.first+i] = t
		}
	}
	var out []segment
	for _, s := range segs {
		var cur *segment
		for i, t := range s.tokens {
			r := s.first + i
			if bt, ok := have[r]; ok {
				if !bytes.Equal(bt, t) {
					return nil, fmt.Errorf("rank %d differs", r)
				}
				delete(have, r)
				cur = nil
				continue
			}
			if cur == nil {
				out = append(out, segment{first: r})
				cur = &out[len(out)-1]
			}
			cur.tokens = append(cur.tokens, t)
		}
	}
	if len(have) != 0 {
		return nil, fmt.Errorf("%d base ranks missing", len(have))
	}
	return out, nil
}
