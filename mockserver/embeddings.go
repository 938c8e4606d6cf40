package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// embeddingsKind is the OpenAI embeddings API (/v1/embeddings): deterministic unit
// vectors, as floats or base64.
type embeddingsKind struct{}

func (embeddingsKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.EmbeddingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model = req.Model
	rec.Model = req.Model
	if req.Input.Empty() || (len(req.Input.Texts) == 0 && len(req.Input.IDs) == 0) {
		return badRequest("missing_field", "input", "you must provide a non-empty input parameter")
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return badRequest("invalid_value", "encoding_format", "encoding_format must be \"float\" or \"base64\", got %q", req.EncodingFormat)
	}
	if n, limit := max(len(req.Input.Texts), len(req.Input.IDs)), orInt(in.cfg.MaxEmbeddingInputs, DefaultMaxEmbeddingInputs); n > limit {
		return badRequest("too_many_inputs", "input", "input has %d items, above this server's limit of %d (--max-embedding-inputs)", n, limit)
	}
	j.encoding = req.EncodingFormat
	j.dims = orInt(in.cfg.EmbeddingDim, DefaultEmbeddingDim)
	if req.Dimensions != nil {
		if *req.Dimensions <= 0 || *req.Dimensions > 65536 {
			return badRequest("invalid_value", "dimensions", "dimensions must be in [1, 65536], got %d", *req.Dimensions)
		}
		j.dims = *req.Dimensions
	}
	ids, e := in.encodePrompt(req.Input, "input", rec)
	if e != nil {
		return e
	}
	j.nInputs = max(len(req.Input.Texts), len(req.Input.IDs))
	j.ids, rec.ISL, rec.Inputs = ids, len(ids), j.nInputs
	return nil
}

// serve answers with deterministic unit vectors after TTFT-like latency.
func (embeddingsKind) serve(h host, ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	r := &c.rec
	if !h.simpleWait(c, rng, ctx.Conn()) {
		return
	}
	resp := openai.EmbeddingResponse{Object: "list", Model: j.model, Usage: openai.Usage{PromptTokens: r.ISL, TotalTokens: r.ISL}}
	vec := make([]float32, j.dims)
	for i := range j.nInputs {
		norm := 0.0
		for k := range vec {
			v := float32(rng.NormFloat64())
			vec[k] = v
			norm += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(norm))
		for k := range vec {
			vec[k] *= inv
		}
		e := openai.Embedding{Object: "embedding", Index: i}
		if j.encoding == "base64" {
			b := make([]byte, 4*len(vec))
			for k, v := range vec {
				binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(v))
			}
			e.Embedding = base64.StdEncoding.EncodeToString(b)
		} else {
			e.Embedding = slices.Clone(vec)
		}
		resp.Data = append(resp.Data, e)
	}
	body, _ := json.Marshal(resp)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	r.Status = 200
	h.finish(c, j.ids)
}
