package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfgate/perfgate/tokenizer"
)

// cmdTokenize reads JSON lines {"text": "..."} (or {"messages": [...]} with
// --chat-template) and writes {"ids": [...], "count": N} per line, in order; --count
// writes only {"count": N}. --text counts one string given on the command line.
func cmdTokenize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "tokenize", "--tokenizer NAME [--add-special-tokens] [--chat-template] [--count] [--in FILE | --text TEXT] < in.jsonl")
	name := fs.String("tokenizer", "gpt2", "tokenizer: built-in name, tokenizer.json, directory or hub id")
	addSpecial := fs.Bool("add-special-tokens", false, "add the tokenizer's special tokens (BOS …) as the HF call does")
	chat := fs.Bool("chat-template", false, "lines carry {\"messages\": [...]}: render the chat template (with the generation prompt) and count that")
	countOnly := fs.Bool("count", false, "write only the counts")
	in := fs.String("in", "", "read JSON lines from this file instead of stdin")
	text := fs.String("text", "", "tokenize this text instead of reading JSON lines")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tok, err := tokenizer.Load(*name)
	if err != nil {
		return invalidf("--tokenizer %s: %v", *name, err)
	}
	if *text != "" {
		ids := tok.Encode(*text, *addSpecial)
		if *countOnly {
			fmt.Fprintf(e.stdout, "{\"count\":%d}\n", len(ids))
			return nil
		}
		b, _ := json.Marshal(struct {
			IDs   []int `json:"ids"`
			Count int   `json:"count"`
		}{ids, len(ids)})
		_, err := e.stdout.Write(append(b, '\n'))
		return err
	}
	var r io.Reader = e.stdin()
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			return invalidf("--in %s: %v", *in, unwrapPath(err))
		}
		defer f.Close()
		r = f
	}
	err = tokenizer.EncodeJSONL(tok, r, e.stdout, tokenizer.JSONLOptions{AddSpecialTokens: *addSpecial, ChatTemplate: *chat, CountOnly: *countOnly})
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), ": write: "):
		return runtimef("%v", err)
	default:
		return invalid(err) // a bad input line, named by its number
	}
}
