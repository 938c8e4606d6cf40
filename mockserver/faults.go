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

// drawFaults draws a generation's stream faults over its target tokens.
func (s *Server) drawFaults(rng *rand.Rand, target int) streamFaults {
	f := s.cfg.Faults
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

// notReady answers a request that comes before Faults.InferenceReadyDelay has passed.
func (s *Server) notReady(ctx *fasthttp.RequestCtx, c *call) bool {
	if d := s.cfg.Faults.InferenceReadyDelay; d > 0 && time.Since(s.start) < d {
		c.rec.Fault = "not_ready"
		s.serviceUnavailable(ctx, c, "the model is loading; retry later")
		return true
	}
	return false
}

// slowFirstByte holds the answer back for Faults.SlowFirstByte, at Faults.SlowFirstByteRate.
func (s *Server) slowFirstByte(c *call, rng *rand.Rand) {
	if f := s.cfg.Faults; f.SlowFirstByteRate > 0 && rng.Float64() < f.SlowFirstByteRate {
		c.rec.Fault = "slow_first_byte"
		select {
		case <-time.After(f.SlowFirstByte):
		case <-s.abort:
		}
	}
}

func (s *Server) serviceUnavailable(ctx *fasthttp.RequestCtx, c *call, msg string) {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(orInt(s.cfg.Faults.RetryAfterSeconds, DefaultRetryAfterSecs)))
	e := &apiError{status: 503, typ: openai.ErrOverloaded, msg: msg}
	s.writeError(ctx, e)
	c.rec.Status = 503
	s.finish(c, nil)
}

// injectError answers with a configured error status, drawn with the request's rng.
func (s *Server) injectError(ctx *fasthttp.RequestCtx, c *call, rng *rand.Rand) bool {
	f := s.cfg.Faults
	if f.ErrorRate <= 0 || rng.Float64() >= f.ErrorRate {
		return false
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
	if st == 429 || st == 503 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(orInt(f.RetryAfterSeconds, DefaultRetryAfterSecs)))
	}
	s.writeError(ctx, e)
	c.rec.Status, c.rec.Fault = st, "error_"+strconv.Itoa(st)
	s.finish(c, nil)
	return true
}
