package mockserver

import (
	"bytes"
	"math/rand/v2"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
)

// kind is one API the server speaks: how a request of it is parsed and answered. Each
// API is its own type (chat.go, completions.go, responses.go, messages.go,
// embeddings.go, rankings.go, transcriptions.go, images.go); the server routes a path to one ([routes]) and treats
// them alike from then on.
type kind interface {
	// parse decodes and validates body (sent with contentType) into j and rec's
	// request fields (model, stream, output limits, the input and its token count),
	// with the limits and tokenizer in. A JSON body has been checked to be non-empty
	// UTF-8; a multipart one is the kind's to check.
	parse(in *inputs, body, contentType []byte, j *job, rec *record.Server) *apiError
	// serve answers the parsed request j and hands its record to h.finish.
	serve(h host, ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand)
}

// host is what a kind's serve uses of the server ([*Server] implements it): the
// latency model's wait, the generation engine that streams a generative kind's
// frames, and the recorder a finished request's record goes to.
type host interface {
	// simpleWait waits out a non-generating request's latency; false if the server
	// is shutting down or the client left (the request is then recorded).
	simpleWait(c *call, rng *rand.Rand, conn net.Conn) bool
	// serveGeneration answers a generative kind's request, whole or streamed.
	serveGeneration(ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand)
	// finish records c (ids are its input tokens, for the vocabulary statistics).
	finish(c *call, ids []int)
	// reject answers c with the error e and records it as refused.
	reject(ctx *fasthttp.RequestCtx, c *call, e *apiError)
	// sleep waits d; false if the server is shutting down (the request is then
	// recorded).
	sleep(c *call, d time.Duration, conn net.Conn) bool
}

// generative is a kind that generates tokens, answered by [Server.serveGeneration]
// as one body or as a stream of frames.
type generative interface {
	kind
	// idPrefix starts the response id ("chatcmpl-", "cmpl-", "resp_", "msg_").
	idPrefix() string
	// reasons reports whether the kind generates reasoning (Config.ReasoningTokens).
	reasons() bool
	// outputParam names the request field that caps the output, for the context
	// length error.
	outputParam(rec *record.Server) string
	// whole appends to dst the body of a non-streaming response: thinking and text are
	// the reasoning and the content generated.
	whole(dst []byte, rp *reply, thinking, text string, u openai.Usage) []byte
	// frames starts writing one streamed response.
	frames(rp *reply) frames
}

// frames writes one streamed response's SSE events, appending them to buf.
type frames interface {
	// start is what goes out before the first token (nothing for OpenAI chunks).
	start(buf []byte) []byte
	// delta is one chunk of text: first for the response's first chunk, thinking for
	// reasoning text.
	delta(buf []byte, first, thinking bool, text string) []byte
	// finish ends the response; first is true if no chunk went out.
	finish(buf []byte, g *gen, first bool, u openai.Usage) []byte
}

// reply is what a generative kind writes one response from.
type reply struct {
	j         *job
	g         *gen
	h         openai.ChunkHeader // the response id, created time and model
	requestID string
	isl       int
}

// generating is what every generative kind shares: it is served by
// [Server.serveGeneration], reasons not, and caps its output with max_tokens or
// max_completion_tokens.
type generating struct{}

func (generating) serve(h host, ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	h.serveGeneration(ctx, c, j, rng)
}

func (generating) reasons() bool { return false }

func (generating) outputParam(rec *record.Server) string {
	if rec.MaxCompletionTokens != nil {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// routes maps each path the server answers an API on to its kind: adding a kind is
// its type and its paths here (docs/endpoints.md).
var routes = map[string]kind{
	openai.PathChat:           chatKind{},
	openai.PathCompletions:    completionKind{},
	openai.PathResponses:      responsesKind{},
	openai.PathMessages:       messagesKind{},
	openai.PathEmbeddings:     embeddingsKind{},
	openai.PathRanking:        rankingsKind{},
	openai.PathRerank:         rankingsKind{},
	"/v1/rankings":            rankingsKind{},
	"/rerank":                 rankingsKind{}, // Hugging Face TEI
	"/v2/rerank":              rankingsKind{}, // Cohere
	openai.PathTranscriptions: transcriptionKind{},
	openai.PathImages:         imagesKind{},
}

// kindOf routes a request path to its API kind (nil: not an API path).
func kindOf(path string) kind { return routes[path] }

// routePaths holds the API paths as strings (path → itself), so that pathString
// converts a request's path without allocating.
var routePaths = func() map[string]string {
	m := map[string]string{}
	for p := range routes {
		m[p] = p
	}
	return m
}()

// pathString is the request path p as a string: an API path's own string (no
// allocation per request), else a copy.
func pathString(p []byte) string {
	if s, ok := routePaths[string(p)]; ok {
		return s
	}
	return string(p)
}

// keyHeader is the header besides Authorization in which kind k accepts the API key
// ("" for none).
func keyHeader(k kind) string {
	if h, ok := k.(interface{ apiKeyHeader() string }); ok {
		return h.apiKeyHeader()
	}
	return ""
}

// errorEnveloper is a kind whose errors go out in an envelope of its own instead of
// OpenAI's {"error": {…}} (the Messages API's).
type errorEnveloper interface {
	errorBody(e *apiError) []byte
}

// contentChunker is a kind whose content chunks are one JSON object around the text
// (chat and completions), so a stream can write them from a [chunkTemplate].
type contentChunker interface {
	appendContent(buf []byte, h openai.ChunkHeader, text string, includeUsage bool) []byte
}

// chunkTemplate is a stream's content chunk split around its text, so each token costs
// one escaped append: prefix + JSON string + suffix is byte for byte the SSE event of
// the kind's content-only chunk (openai.AppendChatChunk / AppendCompletionChunk).
type chunkTemplate struct{ prefix, suffix []byte }

func newChunkTemplate(j *job, h openai.ChunkHeader) *chunkTemplate {
	cc, ok := j.kind.(contentChunker)
	if !ok {
		return nil
	}
	b := cc.appendContent(nil, h, "§marker§", j.includeUsage)
	i := bytes.Index(b, []byte(`"§marker§"`))
	if i < 0 {
		return nil
	}
	return &chunkTemplate{prefix: append(sse.BeginData(nil), b[:i]...), suffix: sse.EndData(b[i+len(`"§marker§"`):])}
}

func (t *chunkTemplate) append(buf []byte, text string) []byte {
	buf = append(buf, t.prefix...)
	buf = openai.AppendString(buf, text)
	return append(buf, t.suffix...)
}
