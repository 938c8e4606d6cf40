package metric

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// benchRecords are the record shapes a run accounts for, as the load generator makes
// them: a non-streaming answer on a kept-alive connection (the shape of
// bench/loadgen's fixed-payload run), a 16-token stream, and a failed request.
func benchRecords() map[string]record.Client {
	ns := record.Client{
		Index: 33, RequestID: "req-33", URL: "http://127.0.0.1:18290/v1/chat/completions", Endpoint: "chat", Model: "m",
		RunStartUnixNano: 1796161920989744025, Scheduled: 1841774, Sent: 24474150, FirstByte: 26482281,
		FirstOutput: 26500924, Done: 26500924, Chunks: []record.Chunk{{T: 26500924, Tokens: 2, Choices: true}},
		Blocked: 10978, Written: 24482675, ConnReused: true, Status: 200, ISL: 8, ISLTemplate: 35,
		TokenizationMode: "chat_template_fallback", ISLExact: true, RequestedISL: 8, OSL: 2,
		UsagePromptTokens: 8, UsageCompletionTokens: 2, FinishReason: "stop", ResponseBytes: 231,
	}
	st := ns
	st.Stream, st.Chunks = true, nil
	t := st.FirstByte
	for i := range 18 {
		t += time.Duration(900_000 + 37_000*i)
		st.Chunks = append(st.Chunks, record.Chunk{T: t, Tokens: min(i, 1), Choices: i < 17})
	}
	st.FirstOutput, st.Done, st.OSL, st.UsageCompletionTokens = st.Chunks[1].T, t, 16, 16
	er := ns
	er.Chunks, er.FirstOutput, er.OSL, er.Status = nil, 0, 0, 503
	er.ErrorKind, er.Error, er.UsagePromptTokens, er.UsageCompletionTokens = record.ErrHTTPStatus, "http status 503", -1, -1
	return map[string]record.Client{"nonstream": ns, "stream": st, "error": er}
}

// BenchmarkAccumulatorAdd is the collector's metric cost per record, for each record
// shape, exact (perftest's in-memory runs), approximate (a run whose records are only
// on disk) and totals only (a run whose caller derives the distributions from the
// file after it, as perftest and bench/loadgen's runs do).
func BenchmarkAccumulatorAdd(b *testing.B) {
	recs := benchRecords()
	for _, shape := range []string{"nonstream", "stream", "error"} {
		for _, mode := range []string{"exact", "approx", "totals"} {
			b.Run(shape+"/"+mode, func(b *testing.B) {
				r := recs[shape]
				a := NewAccumulator(Options{})
				switch mode {
				case "approx":
					a.Approximate()
				case "totals":
					a.TotalsOnly()
				}
				i := 0
				for b.Loop() {
					// Vary the times a little, as a run's do, so the sketches see many values.
					r.Done += time.Duration(i%977) * 1000
					a.Add(&r)
					r.Done -= time.Duration(i%977) * 1000
					i++
				}
			})
		}
	}
}
