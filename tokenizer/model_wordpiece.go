package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// wordPieceModel is greedy longest-match-first WordPiece (BERT).
type wordPieceModel struct {
	vocabTable
	unk      int
	prefix   string
	maxChars int
}

func buildWordPiece(j *jsonModel) (*wordPieceModel, error) {
	vm, err := parseVocab(j.Vocab)
	if err != nil {
		return nil, fmt.Errorf("WordPiece vocab: %w", err)
	}
	vt, err := newVocabTable(vm)
	if err != nil {
		return nil, err
	}
	unkTok := strOr(j.UnkToken, "[UNK]")
	unk, ok := vm[unkTok]
	if !ok {
		unk = -1 // Hugging Face fails only when it needs it; we then emit nothing
	}
	maxChars := 100
	if j.MaxInputCharsPerWord != nil {
		maxChars = *j.MaxInputCharsPerWord
	}
	return &wordPieceModel{vocabTable: vt, unk: unk, prefix: strOr(j.ContinuingSubwordPrefix, "##"), maxChars: maxChars}, nil
}

func (m *wordPieceModel) tokenize(s string, out []int) []int {
	if s == "" {
		return out
	}
	if utf8.RuneCountInString(s) > m.maxChars {
		return m.appendUnk(out)
	}
	start0 := len(out)
	buf := make([]byte, 0, len(s)+len(m.prefix))
	for start := 0; start < len(s); {
		end := len(s)
		found := -1
		for start < end {
			sub := s[start:end]
			var id int
			var ok bool
			if start > 0 {
				buf = append(append(buf[:0], m.prefix...), sub...)
				id, ok = m.toID[string(buf)]
			} else {
				id, ok = m.toID[sub]
			}
			if ok {
				found = id
				break
			}
			_, w := utf8.DecodeLastRuneInString(sub)
			end -= w
		}
		if found < 0 {
			return m.appendUnk(out[:start0])
		}
		out = append(out, found)
		start = end
	}
	return out
}

func (m *wordPieceModel) appendUnk(out []int) []int {
	if m.unk < 0 {
		return out
	}
	return append(out, m.unk)
}

// wordLevelModel maps each piece to its id, or to the unknown token.
type wordLevelModel struct {
	vocabTable
	unk int // -1: none
}

func buildWordLevel(j *jsonModel) (*wordLevelModel, error) {
	vm, err := parseVocab(j.Vocab)
	if err != nil {
		return nil, fmt.Errorf("WordLevel vocab: %w", err)
	}
	vt, err := newVocabTable(vm)
	if err != nil {
		return nil, err
	}
	m := &wordLevelModel{vocabTable: vt, unk: -1}
	if j.UnkToken != nil {
		if id, ok := vm[*j.UnkToken]; ok {
			m.unk = id
		}
	}
	return m, nil
}

func (m *wordLevelModel) tokenize(s string, out []int) []int {
	if id, ok := m.toID[s]; ok {
		return append(out, id)
	}
	if m.unk >= 0 {
		return append(out, m.unk)
	}
	return out
}
