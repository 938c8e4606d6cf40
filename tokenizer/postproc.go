package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
)

// postProcessor adds special tokens around a single sequence.
type postProcessor interface {
	// process returns ids with the special tokens added if addSpecial (it may reuse ids).
	process(ids []int, addSpecial bool) []int
	// added is how many ids process adds to a single sequence (num_special_tokens_to_add).
	added() int
}

func buildPostProcessor(raw json.RawMessage, b *hfBackend) (postProcessor, error) {
	var c jsonComp
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var seq postSequence
		for _, r := range c.Processors {
			p, err := buildPostProcessor(r, b)
			if err != nil {
				return nil, err
			}
			seq = append(seq, p)
		}
		return seq, nil
	case "ByteLevel":
		return postNone{}, nil // offsets only
	case "TemplateProcessing":
		t := &postTemplate{}
		for _, r := range c.Single {
			var piece struct {
				SpecialToken *struct {
					ID string `json:"id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID string `json:"id"`
				} `json:"Sequence"`
			}
			if err := json.Unmarshal(r, &piece); err != nil {
				return nil, fmt.Errorf("TemplateProcessing single: %w", err)
			}
			switch {
			case piece.SpecialToken != nil:
				st, ok := c.SpecialTokens[piece.SpecialToken.ID]
				if !ok {
					return nil, fmt.Errorf("TemplateProcessing: special token %q is not defined", piece.SpecialToken.ID)
				}
				t.parts = append(t.parts, st.IDs)
				t.n += len(st.IDs)
			case piece.Sequence != nil:
				if piece.Sequence.ID != "A" {
					return nil, fmt.Errorf("TemplateProcessing single refers to sequence %q", piece.Sequence.ID)
				}
				t.parts = append(t.parts, nil)
			default:
				return nil, errors.New("TemplateProcessing: unknown template piece")
			}
		}
		return t, nil
	case "BertProcessing", "RobertaProcessing":
		sep, err := tokenPair(c.Sep)
		if err != nil {
			return nil, fmt.Errorf("%s sep: %w", c.Type, err)
		}
		cls, err := tokenPair(c.Cls)
		if err != nil {
			return nil, fmt.Errorf("%s cls: %w", c.Type, err)
		}
		return &postTemplate{parts: [][]int{{cls}, nil, {sep}}, n: 2}, nil
	}
	return nil, errUnsupported{"post_processor", c.Type}
}

// tokenPair reads ["[SEP]", 102].
func tokenPair(raw json.RawMessage) (int, error) {
	var p []json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil || len(p) != 2 {
		return 0, fmt.Errorf("want [token, id], got %s", raw)
	}
	var id int
	if err := json.Unmarshal(p[1], &id); err != nil {
		return 0, err
	}
	return id, nil
}

type postNone struct{}

func (postNone) process(ids []int, _ bool) []int { return ids }
func (postNone) added() int                      { return 0 }

type postSequence []postProcessor

func (q postSequence) process(ids []int, addSpecial bool) []int {
	for _, p := range q {
		ids = p.process(ids, addSpecial)
	}
	return ids
}

func (q postSequence) added() int {
	n := 0
	for _, p := range q {
		n += p.added()
	}
	return n
}

// postTemplate is TemplateProcessing (and Bert/Roberta processing): parts are special
// token ids, with nil standing for the sequence.
type postTemplate struct {
	parts [][]int
	n     int
}

func (t *postTemplate) process(ids []int, addSpecial bool) []int {
	if !addSpecial || t.n == 0 {
		return ids
	}
	out := make([]int, 0, len(ids)+t.n)
	for _, p := range t.parts {
		if p == nil {
			out = append(out, ids...)
		} else {
			out = append(out, p...)
		}
	}
	return out
}

func (t *postTemplate) added() int { return t.n }
