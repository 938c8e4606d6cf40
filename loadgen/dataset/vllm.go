package dataset

import (
	"errors"
	"fmt"
	"math"

	"github.com/perfgate/perfgate/distribution/nprand"
	"github.com/perfgate/perfgate/tokenizer"
)

// VLLMRandom configures vLLM's RandomDataset (`vllm bench serve --dataset-name random`),
// reproduced step by step so the same seed and flags give the same lengths, offsets,
// prefix and token sequences:
//
//  1. real = max(0, InputLen − tok.NumSpecialTokensToAdd()); input lengths are drawn
//     with rng.integers(floor(real·(1−r)), ceil(real·(1+r))+1, size=N), output lengths
//     with rng.integers(max(floor(OutputLen·(1−r)),1), max(ceil(OutputLen·(1+r)),1)+1, size=N),
//     then offsets with rng.integers(0, vocab_size, size=N), rng = default_rng(Seed);
//  2. allowed = the vocabulary ids minus the special ids, ascending; the shared prefix
//     is allowed[rng.integers(0, len(allowed), size=PrefixLen)];
//  3. request i's tokens are prefix + allowed[(offset_i + i + arange(input_len_i)) % len(allowed)];
//  4. decode, re-encode (no special tokens) and, up to 10 times, pad with
//     rng.integers(0, vocab_size, size=missing) from the same stream or truncate, until
//     the count matches; the final prompt's length is the request's ISL.
//
// vocab_size is tok.BaseVocabSize(), Hugging Face's tokenizer.vocab_size, which
// excludes added tokens (128000 for Llama 3, whose len(tokenizer) is 128256), unless
// VocabSize is set. A difference that remains: the special ids are tok.SpecialIDs().
type VLLMRandom struct {
	Tok                 *tokenizer.Tokenizer
	NumRequests         int
	InputLen, OutputLen int
	RangeRatio          float64
	PrefixLen           int
	Seed                uint64
	// VocabSize overrides tok.BaseVocabSize() (0 = use it).
	VocabSize int
}

// VLLMMaxRetry is vLLM's max_retry of gen_prompt_decode_to_target_len.
const VLLMMaxRetry = 10

// NewVLLMRandom builds all NumRequests requests up front, as vLLM does, and returns
// them as a Source.
func NewVLLMRandom(c VLLMRandom) (*Slice, error) {
	items, err := VLLMRandomRequests(c)
	if err != nil {
		return nil, err
	}
	return &Slice{Items: items}, nil
}

// VLLMRandomRequests returns the requests vLLM's RandomDataset.sample would make.
func VLLMRandomRequests(c VLLMRandom) ([]Conversation, error) {
	tok := c.Tok
	if tok == nil {
		return nil, errors.New("dataset: vllm random needs a tokenizer")
	}
	if !(c.RangeRatio >= 0 && c.RangeRatio < 1) {
		return nil, fmt.Errorf("dataset: vllm random: range ratio %v not in [0, 1)", c.RangeRatio)
	}
	if c.NumRequests <= 0 {
		return nil, errors.New("dataset: vllm random: no requests")
	}
	r := c.RangeRatio
	numSpecial := tok.NumSpecialTokensToAdd()
	real := max(0, c.InputLen-numSpecial)
	inLo := int64(math.Floor(float64(real) * (1 - r)))
	inHi := int64(math.Ceil(float64(real) * (1 + r)))
	if int64(c.PrefixLen)+inLo < 1 {
		return nil, fmt.Errorf("dataset: vllm random: input length %d too small: minimum prompt (prefix %d + sampled %d) is < 1 token", c.InputLen, c.PrefixLen, inLo)
	}
	outLo := max(int64(math.Floor(float64(c.OutputLen)*(1-r))), 1)
	outHi := max(int64(math.Ceil(float64(c.OutputLen)*(1+r))), 1)
	vocab := c.VocabSize
	if vocab == 0 {
		vocab = tok.BaseVocabSize()
	}
	rng := nprand.NewGenerator(c.Seed)
	n := c.NumRequests
	inLens := rng.IntegersN(inLo, inHi+1, n)
	outLens := rng.IntegersN(outLo, outHi+1, n)
	offsets := rng.IntegersN(0, int64(vocab), n)

	allowed := allowedBelow(tok, vocab)
	var prefix []int
	if c.PrefixLen > 0 {
		for _, k := range rng.IntegersN(0, int64(len(allowed)), c.PrefixLen) {
			prefix = append(prefix, allowed[k])
		}
	}
	out := make([]Conversation, n)
	for i := range n {
		seq := append([]int(nil), prefix...)
		L := int(inLens[i])
		for j := range L {
			seq = append(seq, allowed[(int(offsets[i])+i+j)%len(allowed)])
		}
		target := c.PrefixLen + L
		prompt, final := decodeToTargetLen(tok, seq, target, VLLMMaxRetry, rng, vocab)
		out[i] = Conversation{ID: fmt.Sprintf("c%d", i), At: -1, Turns: []Turn{{
			Prompt: prompt, ISL: len(final), RequestedISL: target, Exact: len(final) == target,
			OSL: int(outLens[i]),
		}}}
	}
	return out, nil
}

// allowedBelow is AllowedTokens restricted to ids < vocab.
func allowedBelow(tok *tokenizer.Tokenizer, vocab int) []int {
	all := AllowedTokens(tok)
	out := all[:0:0]
	for _, id := range all {
		if id < vocab {
			out = append(out, id)
		}
	}
	return out
}

// decodeToTargetLen is vLLM's gen_prompt_decode_to_target_len: decode (special tokens
// kept), re-encode without special tokens, and while retries remain pad with
// rng.integers(0, vocab, size=missing) or truncate.
func decodeToTargetLen(tok *tokenizer.Tokenizer, seq []int, target, maxRetry int, rng *nprand.Generator, vocab int) (string, []int) {
	remain := maxRetry
	var prompt string
	for {
		prompt = tok.Decode(seq, false)
		seq = append([]int(nil), tok.Encode(prompt, false)...)
		if remain <= 0 || len(seq) == target {
			return prompt, seq
		}
		if len(seq) < target {
			for _, x := range rng.IntegersN(0, int64(vocab), target-len(seq)) {
				seq = append(seq, int(x))
			}
		} else {
			seq = seq[:target]
		}
		remain--
	}
}
