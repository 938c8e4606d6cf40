package loadgen

import (
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

func renderBody(bb *bodyBuilder, e Endpoint, t *dataset.Turn, tc *turnCtx, stream bool) []byte {
	b, _ := bb.build(adapterOf(e), t, tc, stream)
	return b
}

func countInput(r *counter, e Endpoint, t *dataset.Turn, tc *turnCtx, rec *record.Client, sc *scratch) {
	r.templateCount(adapterOf(e), t, tc, rec, sc)
}

func callFor(e Endpoint) *call { return &call{api: adapterOf(e)} }
