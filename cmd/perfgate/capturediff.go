package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/reportgen"
)

// diffCaptures compares the prompts of two capture files: prints "N / M prompts
// differ", the first differences, and writes the HTML view to out. Any difference
// exits 99 under --assert identical or same (prompts have no distribution: equal
// seeds must send equal prompts); without --assert it is reported only.
func diffCaptures(e *env, pathA, pathB, labelA, labelB, out string, show int, must string) error {
	pa, err := capturePrompts(pathA)
	if err != nil {
		return invalidf("--a: %v", err)
	}
	pb, err := capturePrompts(pathB)
	if err != nil {
		return invalidf("--b: %v", err)
	}
	d := reportgen.DiffPrompts(pa, pb, cmp.Or(labelA, filepath.Base(pathA)), cmp.Or(labelB, filepath.Base(pathB)))
	if err := d.WriteText(e.stdout, show); err != nil {
		return runtimef("%v", err)
	}
	if err := reportgen.WriteFileAtomic(out, func(w io.Writer) error { return reportgen.WritePromptDiffReport(w, d, show) }); err != nil {
		return invalidf("--out: %v", err)
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(e.stdout, "report: %s\n", abs)
	if must != "" && d.Differ() > 0 {
		fmt.Fprintf(e.stdout, "FAIL %s\n", d.Summary())
		return errAssertFailed
	}
	return nil
}

// capturePrompts reads a capture file's requests as prompts: every request with a
// body, in arrival order.
func capturePrompts(path string) ([]reportgen.Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	caps, err := mockserver.ReadCapture(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var ps []reportgen.Prompt
	for _, c := range caps {
		if len(c.Body) == 0 {
			continue // GET /v1/models, /health: no prompt
		}
		p := reportgen.Prompt{Seq: c.Seq, Text: promptText(c.Body)}
		for k, v := range c.Headers {
			if strings.EqualFold(k, "X-Request-Id") {
				p.RequestID = v
			}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no request with a body in the capture", path)
	}
	return ps, nil
}

// promptText is the prompt of a request body: a chat request's messages as
// "role: content" lines (text parts joined), a completion's or an embedding's
// prompt/input, a Responses request's input; the body itself when it has none of these.
func promptText(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		System json.RawMessage `json:"system"`
		Prompt json.RawMessage `json:"prompt"`
		Input  json.RawMessage `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return string(body)
	}
	var b strings.Builder
	if t := contentText(req.System); t != "" {
		b.WriteString("system: " + t + "\n")
	}
	for _, m := range req.Messages {
		b.WriteString(m.Role + ": " + contentText(m.Content) + "\n")
	}
	switch {
	case b.Len() > 0:
		return b.String()
	case req.Prompt != nil:
		return contentText(req.Prompt)
	case req.Input != nil:
		return contentText(req.Input)
	}
	return string(body)
}

// contentText flattens a content value: a string, a list of strings or of parts with
// "text" (or messages with "content"), joined by newlines; other JSON as it is.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			var part struct {
				Role    string          `json:"role"`
				Text    *string         `json:"text"`
				Content json.RawMessage `json:"content"`
			}
			switch {
			case json.Unmarshal(item, &s) == nil:
				parts = append(parts, s)
			case json.Unmarshal(item, &part) == nil && part.Text != nil:
				parts = append(parts, *part.Text)
			case json.Unmarshal(item, &part) == nil && part.Content != nil:
				parts = append(parts, part.Role+": "+contentText(part.Content))
			default:
				parts = append(parts, string(item))
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}
