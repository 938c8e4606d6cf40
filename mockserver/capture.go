package mockserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

// CaptureConfig configures capture mode (`perfgate capture --out FILE`).
type CaptureConfig struct {
	// Host and Port to bind; "" = 127.0.0.1, 0 = a free port.
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// Out is the capture file (JSON lines, see [Captured]), written as requests arrive
	// and never held in memory; "" keeps captures in memory only (for tests).
	Out string `json:"out,omitempty"`
	// BodyLimit is the maximum body in bytes (0 = 64 MiB).
	BodyLimit int `json:"body_limit,omitempty"`
	// Models are the model ids /v1/models lists, as the mock's Config.Models: the
	// first is the default, "" entries are ignored, empty = [DefaultModel]. A client
	// that checks its model is served (perfgate's and AIPerf's preflight) needs its
	// model here; requests for any model are captured whatever this says.
	Models []string `json:"models,omitempty"`
}

// models returns the listed model ids, as [Config] lists them.
func (c CaptureConfig) models() []string {
	mc := Config{Models: c.Models}
	return mc.models()
}

// RegisterModelFlags registers --default-model and --models on fs, as the mock server
// takes them.
func (c *CaptureConfig) RegisterModelFlags(fs *flag.FlagSet) {
	registerModelFlags(fs, &c.Models, func() string { return c.models()[0] }, "model id listed first by /v1/models (default "+c.models()[0]+")")
}

// Captured is one line of a capture file: a request exactly as received. Body holds the
// bytes byte for byte: in the file it is written inline as JSON when the body is valid
// JSON on one line, else base64 in "body_base64"; [ReadCapture] restores the bytes either
// way. Credentials (Authorization, Cookie, API-key headers) are never written.
type Captured struct {
	Seq     uint64            `json:"seq"`
	TS      float64           `json:"ts"` // Unix seconds
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"-"`
}

type capturedWire struct {
	Seq        uint64            `json:"seq"`
	TS         float64           `json:"ts"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Query      string            `json:"query,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       json.RawMessage   `json:"body,omitempty"`
	BodyBase64 string            `json:"body_base64,omitempty"`
	BodyLen    int               `json:"body_len"`
}

// MarshalJSON writes the wire form described at [Captured].
func (c Captured) MarshalJSON() ([]byte, error) {
	w := capturedWire{Seq: c.Seq, TS: c.TS, Method: c.Method, Path: c.Path, Query: c.Query, Headers: c.Headers, BodyLen: len(c.Body)}
	if len(c.Body) > 0 && json.Valid(c.Body) && !bytes.ContainsAny(c.Body, "\r\n") && !startsOrEndsWithSpace(c.Body) {
		w.Body = c.Body
	} else if len(c.Body) > 0 {
		w.BodyBase64 = base64.StdEncoding.EncodeToString(c.Body)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func startsOrEndsWithSpace(b []byte) bool {
	isSp := func(c byte) bool { return c == ' ' || c == '\t' }
	return isSp(b[0]) || isSp(b[len(b)-1])
}

// UnmarshalJSON reads the wire form, restoring Body byte for byte.
func (c *Captured) UnmarshalJSON(b []byte) error {
	var w capturedWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Captured{Seq: w.Seq, TS: w.TS, Method: w.Method, Path: w.Path, Query: w.Query, Headers: w.Headers}
	switch {
	case w.BodyBase64 != "":
		body, err := base64.StdEncoding.DecodeString(w.BodyBase64)
		if err != nil {
			return fmt.Errorf("mockserver: capture body_base64: %w", err)
		}
		c.Body = body
	case w.Body != nil:
		c.Body = []byte(w.Body)
	}
	if len(c.Body) != w.BodyLen {
		return fmt.Errorf("mockserver: capture seq %d: body is %d bytes, body_len says %d", w.Seq, len(c.Body), w.BodyLen)
	}
	return nil
}

// ReadCapture reads a capture file.
func ReadCapture(r io.Reader) ([]Captured, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<30)
	var out []Captured
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c Captured
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return out, fmt.Errorf("mockserver: capture line %d: %w", line, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// Capture is a server that records every request body byte for byte and answers with a
// minimal valid completion, so any client can be pointed at it to see exactly what it
// sends. Safe for concurrent use.
type Capture struct {
	cfg  CaptureConfig
	logw io.Writer
	fs   *fasthttp.Server
	ln   net.Listener
	url  string

	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	seq   uint64
	caps  []Captured
	err   error
	close sync.Once
	cerr  error
}

// NewCapture returns a capture server (not yet listening).
func NewCapture(cfg CaptureConfig, logw io.Writer) (*Capture, error) {
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("mockserver: capture port %d out of range", cfg.Port)
	}
	return &Capture{cfg: cfg, logw: logw}, nil
}

// Start opens the output file and listens.
func (c *Capture) Start() error {
	host := c.cfg.Host
	if host == "" {
		host = DefaultHost
	}
	if c.cfg.Out != "" {
		f, err := os.Create(c.cfg.Out)
		if err != nil {
			return fmt.Errorf("mockserver: capture file: %w", err)
		}
		c.f, c.w = f, bufio.NewWriter(f)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(c.cfg.Port)))
	if err != nil {
		if c.f != nil {
			c.f.Close()
		}
		return fmt.Errorf("mockserver: capture listen: %w", err)
	}
	c.ln, c.url = ln, "http://"+ln.Addr().String()
	c.fs = &fasthttp.Server{Handler: c.handle, Name: "perfgate-capture", MaxRequestBodySize: orInt(c.cfg.BodyLimit, DefaultBodyLimit),
		NoDefaultContentType: true, CloseOnShutdown: true, Logger: writerLogger{c.logw},
		DisablePreParseMultipartForm: true} // a multipart body as sent, not re-marshalled from a map
	go c.fs.Serve(ln)
	if c.logw != nil {
		fmt.Fprintf(c.logw, "mockserver: capturing on %s to %s\n", c.url, c.cfg.Out)
	}
	return nil
}

// URL returns "http://HOST:PORT".
func (c *Capture) URL() string { return c.url }

// Captures returns what was captured so far: read back from CaptureConfig.Out when set
// (the server keeps none in memory), else the in-memory copies.
func (c *Capture) Captures() []Captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.Out == "" {
		return append([]Captured(nil), c.caps...)
	}
	if c.w != nil {
		_ = c.w.Flush()
	}
	f, err := os.Open(c.cfg.Out)
	if err != nil {
		return nil
	}
	defer f.Close()
	caps, _ := ReadCapture(f)
	return caps
}

// Count returns the number of requests captured so far.
func (c *Capture) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.seq)
}

// Close stops the server (waiting up to 5 s for in-flight requests) and closes the file.
func (c *Capture) Close() error {
	c.close.Do(func() {
		if c.fs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = c.fs.ShutdownWithContext(ctx)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.f != nil {
			err := c.w.Flush()
			if err2 := c.f.Close(); err == nil {
				err = err2
			}
			c.cerr = errors.Join(c.err, err)
			c.f = nil
		} else {
			c.cerr = c.err
		}
	})
	return c.cerr
}

// ServeCapture runs a capture server until ctx is cancelled.
func ServeCapture(ctx context.Context, cfg CaptureConfig, logw io.Writer) error {
	c, err := NewCapture(cfg, logw)
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	err = c.Close()
	if logw != nil {
		fmt.Fprintf(logw, "mockserver: captured %d requests\n", c.Count())
	}
	return err
}

func (c *Capture) handle(ctx *fasthttp.RequestCtx) {
	now := time.Now()
	cp := Captured{TS: float64(now.UnixNano()) / 1e9, Method: string(ctx.Method()), Path: string(ctx.Path()),
		Query: string(ctx.URI().QueryString()), Headers: map[string]string{}}
	for k, v := range ctx.Request.Header.All() {
		if !openai.CredentialHeader(string(k)) { // credentials are never written to a capture
			cp.Headers[string(k)] = string(v)
		}
	}
	cp.Body = ctx.PostBody() // valid until the handler returns: written, not kept
	c.mu.Lock()
	c.seq++
	cp.Seq = c.seq
	if c.cfg.Out == "" {
		kept := cp
		kept.Body = append([]byte(nil), cp.Body...)
		c.caps = append(c.caps, kept)
	}
	if c.w != nil {
		b, err := cp.MarshalJSON()
		if err == nil {
			_, err = c.w.Write(append(b, '\n'))
		}
		if err == nil {
			err = c.w.Flush()
		}
		if err != nil && c.err == nil {
			c.err = fmt.Errorf("mockserver: capture write: %w", err)
		}
	}
	c.mu.Unlock()
	minimalAnswer(ctx, cp, c.cfg.models())
}

// minimalAnswer replies with the smallest valid response for the endpoint.
func minimalAnswer(ctx *fasthttp.RequestCtx, cp Captured, models []string) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(cp.Body, &req)
	h := openai.ChunkHeader{ID: "capture-" + strconv.FormatUint(cp.Seq, 10), Created: int64(cp.TS), Model: req.Model}
	u := openai.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}
	jsonBody := func(v any) {
		b, _ := json.Marshal(v)
		ctx.SetContentType("application/json")
		ctx.SetBody(b)
	}
	fin := "stop"
	switch cp.Path {
	case "/v1/chat/completions", "/v1/completions", "/v1/responses":
		if !req.Stream {
			switch cp.Path {
			case "/v1/completions":
				jsonBody(openai.Completion{ID: h.ID, Object: "text_completion", Created: h.Created, Model: h.Model,
					Choices: []openai.CompletionChoice{{Text: "ok", FinishReason: &fin, Logprobs: json.RawMessage("null")}}, Usage: &u})
			case "/v1/responses":
				rs := &respStream{h: h, itemID: "msg_" + h.ID}
				jsonBody(rs.response("completed", "ok", &openai.ResponseUsage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2}, false))
			default:
				jsonBody(openai.ChatCompletion{ID: h.ID, Object: "chat.completion", Created: h.Created, Model: h.Model,
					Choices: []openai.ChatChoice{{Message: openai.ResponseMessage{Role: "assistant", Content: "ok"}, FinishReason: fin,
						Logprobs: json.RawMessage("null")}}, Usage: &u})
			}
			return
		}
		var b []byte
		chunk := func(data []byte) { b = sse.AppendData(b, data) }
		switch cp.Path {
		case "/v1/completions":
			chunk(openai.AppendCompletionChunk(nil, h, "ok", "", false))
			chunk(openai.AppendCompletionChunk(nil, h, "", fin, false))
			chunk(openai.AppendCompletionUsageChunk(nil, h, u))
			b = append(b, sse.Done...)
		case "/v1/responses":
			rs := &respStream{h: h, itemID: "msg_" + h.ID}
			b = rs.start(b)
			b = rs.delta(b, true, false, "ok")
			b = rs.finish(b, &gen{finish: fin, j: &job{}}, false, u)
		default:
			chunk(openai.AppendChatChunk(nil, h, "assistant", "", "", false))
			chunk(openai.AppendChatChunk(nil, h, "", "ok", "", false))
			chunk(openai.AppendChatChunk(nil, h, "", "", fin, false))
			chunk(openai.AppendChatUsageChunk(nil, h, u))
			b = append(b, sse.Done...)
		}
		ctx.SetContentType(sse.ContentType)
		ctx.SetBody(b)
	case "/v1/embeddings":
		jsonBody(openai.EmbeddingResponse{Object: "list", Model: req.Model, Data: []openai.Embedding{{Object: "embedding", Embedding: []float32{1, 0, 0, 0}}},
			Usage: openai.Usage{PromptTokens: 1, TotalTokens: 1}})
	case "/v1/models":
		list := openai.ModelList{Object: "list"}
		for _, m := range models {
			list.Data = append(list.Data, openai.Model{ID: m, Object: "model", OwnedBy: "perfgate"})
		}
		jsonBody(list)
	case "/health":
		jsonBody(map[string]string{"status": "ok"})
	default:
		jsonBody(map[string]any{})
	}
}

// writerLogger sends fasthttp's log lines to w, or nowhere when w is nil.
type writerLogger struct{ w io.Writer }

func (l writerLogger) Printf(format string, args ...any) {
	if l.w != nil {
		fmt.Fprintf(l.w, "mockserver: fasthttp: "+format+"\n", args...)
	}
}
