package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// DefaultMaxLineBytes bounds one input line of [EncodeJSONL] when
// JSONLOptions.MaxLineBytes is 0.
const DefaultMaxLineBytes = 256 << 20

// JSONLOptions controls [EncodeJSONL]. The zero value encodes {"text": …} lines without
// special tokens and writes ids and counts.
type JSONLOptions struct {
	// AddSpecialTokens adds the tokenizer's special tokens (BOS …) to each text, as
	// Encode(text, true). Ignored with ChatTemplate: a rendered template already holds them.
	AddSpecialTokens bool

	// ChatTemplate reads {"messages": [{"role": …, "content": …}, …]} lines instead, renders
	// them with the tokenizer's chat template and a generation prompt, and encodes the
	// result without adding special tokens (as transformers'
	// apply_chat_template(tokenize=True, add_generation_prompt=True)).
	ChatTemplate bool

	// CountOnly writes {"count": N} lines, without the ids.
	CountOnly bool

	// MaxLineBytes is the longest input line accepted, in bytes; 0 means
	// DefaultMaxLineBytes. Memory use is bounded by about twice this.
	MaxLineBytes int
}

// EncodeJSONL reads JSON lines from in and writes, for each, {"ids": [...], "count": N}
// (or {"count": N} with CountOnly) to out, in order. Each input line is {"text": "..."},
// or {"messages": [...]} with ChatTemplate; blank lines are skipped and produce no
// output. It streams: lines are written as they are encoded.
//
// A bad line stops the run with an error naming the line number (counting from 1);
// the lines before it have been written. EncodeJSONL is what `perfgate tokenize` runs.
func EncodeJSONL(tok *Tokenizer, in io.Reader, out io.Writer, opts JSONLOptions) error {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriterSize(out, 64<<10)
	var buf, line []byte
	for n := 1; ; n++ {
		if br.Buffered() == 0 {
			// About to block on input: let the reader see what is done so far.
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("tokenizer: jsonl: write: %w", err)
			}
		}
		var err error
		line, err = readLine(br, line[:0], max)
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			bw.Flush()
			if errors.Is(err, errLineTooLong) {
				return fmt.Errorf("tokenizer: jsonl line %d: longer than %d bytes", n, max)
			}
			return fmt.Errorf("tokenizer: jsonl line %d: read: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		ids, lerr := encodeJSONLine(tok, line, opts)
		if lerr != nil {
			bw.Flush()
			return fmt.Errorf("tokenizer: jsonl line %d: %w", n, lerr)
		}
		buf = appendResult(buf[:0], ids, opts.CountOnly)
		if _, werr := bw.Write(buf); werr != nil {
			return fmt.Errorf("tokenizer: jsonl: write: %w", werr)
		}
		if err == io.EOF {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("tokenizer: jsonl: write: %w", err)
	}
	return nil
}

var errLineTooLong = errors.New("line too long")

// readLine appends the next line of r (without its newline) to dst. At the end of the
// input it returns io.EOF, with the last line if it had no newline.
func readLine(r *bufio.Reader, dst []byte, max int) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(dst)+len(chunk) > max+1 {
			// Skip the rest of the line so the error is about this line only.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			return dst[:0], errLineTooLong
		}
		dst = append(dst, chunk...)
		switch {
		case err == nil:
			dst = dst[:len(dst)-1]
			if len(dst) > 0 && dst[len(dst)-1] == '\r' {
				dst = dst[:len(dst)-1]
			}
			return dst, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return dst, err
		}
	}
}

type jsonlInput struct {
	Text     *string         `json:"text"`
	Messages json.RawMessage `json:"messages"`
}

func encodeJSONLine(tok *Tokenizer, line []byte, opts JSONLOptions) ([]int, error) {
	var in jsonlInput
	if err := json.Unmarshal(line, &in); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if opts.ChatTemplate {
		if in.Messages == nil {
			return nil, errors.New(`want {"messages": [...]} (chat-template mode)`)
		}
		// The template sees the messages as sent: key order and extra fields kept.
		text, err := tok.ApplyChatTemplateJSON(in.Messages, ChatOptions{AddGenerationPrompt: true})
		if err != nil {
			return nil, err
		}
		return tok.Encode(text, false), nil
	}
	if in.Text == nil {
		if in.Messages != nil {
			return nil, errors.New(`has "messages" but chat-template mode is off`)
		}
		return nil, errors.New(`want {"text": "..."}`)
	}
	return tok.Encode(*in.Text, opts.AddSpecialTokens), nil
}

func appendResult(b []byte, ids []int, countOnly bool) []byte {
	if !countOnly {
		b = append(b, `{"ids":[`...)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		b = append(b, `],`...)
	} else {
		b = append(b, '{')
	}
	b = append(b, `"count":`...)
	b = strconv.AppendInt(b, int64(len(ids)), 10)
	return append(b, "}\n"...)
}
