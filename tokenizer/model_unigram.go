package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// unigramModel is the SentencePiece Unigram model: the Viterbi best segmentation by piece
// log-probabilities, with unknown characters fused and scored min_score-10.
type unigramModel struct {
	vocabTable
	scores       []float64 // by id
	unk          int       // -1: none
	byteFallback bool
	minScore     float64
	maxLen       int // longest piece in bytes
	fallbackIDs  [256]int
}

const unigramUnkPenalty = 10.0

func buildUnigram(j *jsonModel) (*unigramModel, error) {
	var list [][2]json.RawMessage
	if err := json.Unmarshal(j.Vocab, &list); err != nil {
		return nil, fmt.Errorf("model Unigram: vocab: %w", err)
	}
	m := &unigramModel{unk: -1, byteFallback: j.ByteFallback, minScore: math.Inf(1)}
	vm := make(map[string]int, len(list))
	m.scores = make([]float64, len(list))
	for id, e := range list {
		var tok string
		var score float64
		if err := json.Unmarshal(e[0], &tok); err != nil {
			return nil, fmt.Errorf("model Unigram: vocab entry %d: %w", id, err)
		}
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fmt.Errorf("model Unigram: vocab entry %d: %w", id, err)
		}
		vm[tok] = id
		m.scores[id] = score
		m.minScore = min(m.minScore, score)
		m.maxLen = max(m.maxLen, len(tok))
	}
	if j.UnkID != nil {
		if len(list) == 0 {
			return nil, errors.New("model Unigram: the vocab is empty")
		}
		if *j.UnkID < 0 || *j.UnkID >= len(list) {
			return nil, fmt.Errorf("model Unigram: unk_id %d is not in the vocab", *j.UnkID)
		}
		m.unk = *j.UnkID
	}
	vt, err := newVocabTable(vm)
	if err != nil {
		return nil, err
	}
	// ids come from the list: a duplicated piece keeps both ids (the later wins for
	// token → id, as in Hugging Face).
	vt.sparse = nil
	vt.toTok = make([]string, len(list))
	vt.has = make([]bool, len(list))
	for id, e := range list {
		_ = json.Unmarshal(e[0], &vt.toTok[id])
		vt.has[id] = true
	}
	m.vocabTable = vt
	for b := 0; b < 256; b++ {
		id, ok := vm[fmt.Sprintf("<0x%02X>", b)]
		if !ok {
			id = -1
		}
		m.fallbackIDs[b] = id
	}
	return m, nil
}

type unigramNode struct {
	id     int
	score  float64
	start  int
	filled bool
}

func (m *unigramModel) tokenize(s string, out []int) []int {
	if s == "" {
		return out
	}
	unkScore := m.minScore - unigramUnkPenalty
	best := make([]unigramNode, len(s)+1)
	for start := 0; start < len(s); {
		_, mblen := utf8.DecodeRuneInString(s[start:])
		base := best[start].score
		single := false
		for end := start + 1; end <= len(s) && end-start <= m.maxLen; end++ {
			id, ok := m.toID[s[start:end]]
			if !ok {
				continue
			}
			cand := m.scores[id] + base
			t := &best[end]
			if !t.filled || cand > t.score {
				*t = unigramNode{id: id, score: cand, start: start, filled: true}
			}
			if end-start == mblen {
				single = true
			}
		}
		if !single {
			t := &best[start+mblen]
			cand := unkScore + base
			if !t.filled || cand > t.score {
				if m.unk < 0 {
					return out // Hugging Face fails here (MissingUnkId); emit nothing more
				}
				*t = unigramNode{id: m.unk, score: cand, start: start, filled: true}
			}
		}
		start += mblen
	}
	// Walk back, fusing consecutive unknowns into one string.
	var pieces []string
	unkEnd := -1
	for end := len(s); end > 0; {
		n := best[end]
		if n.id == m.unk && m.unk >= 0 {
			if unkEnd < 0 {
				unkEnd = end
			}
		} else {
			if unkEnd >= 0 {
				pieces = append(pieces, s[end:unkEnd])
				unkEnd = -1
			}
			pieces = append(pieces, s[n.start:end])
		}
		end = n.start
		if end == 0 && unkEnd >= 0 {
			pieces = append(pieces, s[0:unkEnd])
		}
	}
	for i := len(pieces) - 1; i >= 0; i-- {
		p := pieces[i]
		if id, ok := m.toID[p]; ok {
			out = append(out, id)
			continue
		}
		if m.byteFallback {
			all := true
			for k := 0; k < len(p); k++ {
				if m.fallbackIDs[p[k]] < 0 {
					all = false
					break
				}
			}
			if all {
				for k := 0; k < len(p); k++ {
					out = append(out, m.fallbackIDs[p[k]])
				}
				continue
			}
		}
		if m.unk >= 0 {
			out = append(out, m.unk)
		}
	}
	return out
}
