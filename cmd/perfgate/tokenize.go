package main

import (
	"bufio"
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
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	emit := func(ids []int) error {
		if *countOnly {
			_, err := fmt.Fprintf(out, "{\"count\":%d}\n", len(ids))
			return err
		}
		b, _ := json.Marshal(struct {
			IDs   []int `json:"ids"`
			Count int   `json:"count"`
		}{ids, len(ids)})
		_, err := out.Write(append(b, '\n'))
		return err
	}
	if *text != "" {
		return emit(tok.Encode(*text, *addSpecial))
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var v struct {
			Text     *string         `json:"text"`
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			return invalidf("line %d: not JSON: %v", line, err)
		}
		var ids []int
		switch {
		case *chat && v.Messages != nil:
			s, err := tok.ApplyChatTemplateJSON(v.Messages, tokenizer.ChatOptions{AddGenerationPrompt: true})
			if err != nil {
				return invalidf("line %d: %v", line, err)
			}
			ids = tok.Encode(s, false) // the rendered text carries BOS already
		case v.Text != nil:
			ids = tok.Encode(*v.Text, *addSpecial)
		case v.Messages != nil:
			return invalidf("line %d: {\"messages\"} needs --chat-template", line)
		default:
			return invalidf("line %d: want {\"text\": ...} or, with --chat-template, {\"messages\": [...]}", line)
		}
		if err := emit(ids); err != nil {
			return runtimef("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return runtimef("read: %v", err)
	}
	return nil
}
