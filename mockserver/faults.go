package mockserver

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

// Fault injection (Config.Faults): error statuses, a slow first byte, the model still
// loading, and, inside a stream, a disconnect or a malformed chunk. Every draw uses the
// request's rng, so a seed reproduces the faults as it reproduces the output.

// streamFaults are the faults one generation drew: a disconnect after token
// disconnectAt and a malformed chunk in the chunk holding token malformedAt (-1: none).
type streamFaults struct{ disconnectAt, malformedAt int }

// injector draws the faults Config.Faults injects, each with the request's rng; the
// server answers with what it draws ([Server.fault]).
type injector struct{ f Faults }

// stream draws a generation's stream faults over its target tokens.
func (in *injector) stream(rng *rand.Rand, target int) streamFaults {
	f := &in.f
	d := streamFaults{disconnectAt: -1, malformedAt: -1}
	if f.DisconnectRate > 0 && rng.Float64() < f.DisconnectRate {
		d.disconnectAt = rng.IntN(max(target, 1))
	}
	if f.MalformedChunkRate > 0 && rng.Float64() < f.MalformedChunkRate {
		d.malformedAt = rng.IntN(max(target, 1))
	}
	return d
}

// malformed reports whether the chunk of tokens [from, to) carries the malformed chunk,
// once.
func (f *streamFaults) malformed(from, to int) bool {
	if f.malformedAt >= 0 && from <= f.malformedAt && f.malformedAt < to {
		f.malformedAt = -1
		return true
	}
	return false
}

// disconnect reports whether the stream is cut after sent tokens.
func (f *streamFaults) disconnect(sent int) bool { return f.disconnectAt >= 0 && sent > f.disconnectAt }

// appendMalformed appends a chunk whose JSON is cut off mid-way.
func appendMalformed(buf []byte, id string) []byte {
	buf = sse.BeginData(buf)
	buf = append(buf, `{"id":"`...)
	buf = append(buf, id...)
	buf = append(buf, `","choices":[{"delta":{"content":`...)
	return sse.EndData(buf)
}

// disconnectLag is how long an injected disconnect waits after its last chunk.
const disconnectLag = 50 * time.Millisecond

// notReady is the answer to a request that came since after the start, before
// Faults.InferenceReadyDelay passed; nil once it has.
func (in *injector) notReady(since time.Duration) (*apiError, string) {
	if d := in.f.InferenceReadyDelay; d > 0 && since < d {
		return &apiError{status: 503, typ: openai.ErrOverloaded, msg: "the model is loading; retry later"}, "not_ready"
	}
	return nil, ""
}

// slowFirstByte is how long this request's answer is held back (Faults.SlowFirstByte
// at Faults.SlowFirstByteRate); 0 = not.
func (in *injector) slowFirstByte(rng *rand.Rand) time.Duration {
	if f := &in.f; f.SlowFirstByteRate > 0 && rng.Float64() < f.SlowFirstByteRate {
		return f.SlowFirstByte
	}
	return 0
}

// error draws an injected error status (Faults.ErrorRate over Faults.ErrorStatuses)
// and its fault name; nil = none.
func (in *injector) error(rng *rand.Rand) (*apiError, string) {
	f := &in.f
	if f.ErrorRate <= 0 || rng.Float64() >= f.ErrorRate {
		return nil, ""
	}
	statuses := f.ErrorStatuses
	if len(statuses) == 0 {
		statuses = []int{500}
	}
	st := statuses[rng.IntN(len(statuses))]
	e := &apiError{status: st}
	switch st {
	case 429:
		e.typ, e.code, e.msg = openai.ErrRateLimit, "rate_limit_exceeded", "rate limit reached (injected by the mock server)"
	case 503:
		e.typ, e.msg = openai.ErrOverloaded, "the server is overloaded (injected by the mock server)"
	default:
		e.typ, e.msg = openai.ErrServer, "the server had an error while processing your request (injected by the mock server)"
	}
	return e, "error_" + strconv.Itoa(st)
}

// retryAfter is the Retry-After a 429 or 503 fault carries, in seconds.
func (in *injector) retryAfter() string {
	return strconv.Itoa(orInt(in.f.RetryAfterSeconds, DefaultRetryAfterSecs))
}

// fault answers c with the injected error e (Retry-After on a 429 or 503) and records
// it as the fault named name.
func (s *Server) fault(ctx *fasthttp.RequestCtx, c *call, e *apiError, name string) {
	if e.status == 429 || e.status == 503 {
		ctx.Response.Header.Set("Retry-After", s.faults.retryAfter())
	}
	s.writeError(ctx, e)
	c.rec.Status, c.rec.Fault = e.status, name
	s.finish(c, nil)
}

// slowFirstByte holds c's answer back when the injector draws a slow first byte.
func (s *Server) slowFirstByte(c *call, rng *rand.Rand) {
	if d := s.faults.slowFirstByte(rng); d > 0 {
		c.rec.Fault = "slow_first_byte"
		select {
		case <-time.After(d):
		case <-s.abort:
		}
	}
}
