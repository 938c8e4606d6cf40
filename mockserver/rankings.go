package mockserver

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// rankingsKind is NVIDIA NIM's rankings API and the Cohere/vLLM rerank API, answered in
// both shapes at once (/v1/rankings, /v1/ranking, /v1/rerank, /rerank, /v2/rerank).
type rankingsKind struct{}

func (rankingsKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.RankingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model = req.Model
	rec.Model = req.Model
	if !req.Query.Set {
		return badRequest("missing_field", "query", "you must provide a query")
	}
	docs := req.Docs()
	if len(docs) == 0 {
		return badRequest("missing_field", "documents", "you must provide documents (or passages)")
	}
	if limit := orInt(in.cfg.MaxRankingDocs, DefaultMaxRankingDocs); len(docs) > limit {
		return badRequest("too_many_inputs", "documents", "%d documents, above this server's limit of %d (--max-ranking-docs)", len(docs), limit)
	}
	ids, n := in.encodeBounded(req.Query.Text, in.maxModelLen())
	if e := in.checkLen(n, "query"); e != nil {
		return e
	}
	for _, d := range docs {
		d, n := in.encodeBounded(d.Text, in.maxModelLen())
		if e := in.checkLen(n, "documents"); e != nil {
			return e
		}
		ids = append(ids, d...)
	}
	j.nInputs = len(docs)
	j.topN = len(docs)
	if req.TopN != nil {
		if *req.TopN <= 0 {
			return badRequest("invalid_value", "top_n", "top_n must be at least 1, got %d", *req.TopN)
		}
		j.topN = min(*req.TopN, len(docs))
	}
	j.ids, rec.ISL, rec.Inputs, rec.TokenizationMode = ids, len(ids), len(docs)+1, record.ModeEncodeWithoutSpecialTokens
	return nil
}

// serve answers NIM rankings and Cohere/vLLM rerank shapes at once.
func (rankingsKind) serve(h host, ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	r := &c.rec
	if !h.simpleWait(c, rng, ctx.Conn()) {
		return
	}
	type scored struct {
		i int
		v float64
	}
	sc := make([]scored, j.nInputs)
	for i := range sc {
		sc[i] = scored{i, rng.NormFloat64() * 3}
	}
	slices.SortFunc(sc, func(a, b scored) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return a.i - b.i
	})
	resp := openai.RankingResponse{ID: "rank-" + r.RequestID, Model: j.model, Usage: &openai.Usage{PromptTokens: r.ISL, TotalTokens: r.ISL}}
	for k, x := range sc {
		resp.Rankings = append(resp.Rankings, openai.Ranking{Index: x.i, Logit: x.v})
		if k < j.topN {
			resp.Results = append(resp.Results, openai.RerankResult{Index: x.i, RelevanceScore: 1 / (1 + math.Exp(-x.v))})
		}
	}
	body, _ := json.Marshal(resp)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	r.Status = 200
	h.finish(c, j.ids)
}
