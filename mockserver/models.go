package mockserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
)

// The served model names. Served are Config.Models; a request for another name is
// refused with vLLM's 404 under Config.StrictModel (the default of `perfgate mock`),
// served silently otherwise (the library's default, for tests), and served and listed
// from then on under Config.AnyModel, so a client's preflight and the mock agree.

// modelSet is the served model names, safe for concurrent use: Config.Models, and
// under any (Config.AnyModel) every name a request asked for, learned on the way.
type modelSet struct {
	mu    sync.RWMutex
	names []string
	any   bool
}

func newModelSet(cfg *Config) *modelSet { return &modelSet{names: cfg.models(), any: cfg.AnyModel} }

// list returns the names /v1/models lists.
func (ms *modelSet) list() []string {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return slices.Clone(ms.names)
}

// first is the default model, the first configured.
func (ms *modelSet) first() string {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.names[0]
}

// serves reports whether model m is served, learning it under AnyModel.
func (ms *modelSet) serves(m string) bool {
	ms.mu.RLock()
	ok := slices.Contains(ms.names, m)
	ms.mu.RUnlock()
	if ok || !ms.any {
		return ok
	}
	ms.mu.Lock()
	if !slices.Contains(ms.names, m) {
		ms.names = append(ms.names, m)
	}
	ms.mu.Unlock()
	return true
}

// unknownModel is vLLM's answer to a request for a model it does not serve: its
// message and its error type (NotFoundError), in the mock's error envelope.
func unknownModel(m string) *apiError {
	return &apiError{status: 404, typ: "NotFoundError", reason: "unknown_model", param: "model", code: "404",
		msg: fmt.Sprintf("The model `%s` does not exist.", m)}
}

// handleModelPath answers GET /v1/models/{model}: the model object when it is served
// (or, under AnyModel, from now on), else vLLM's 404.
func (s *Server) handleModelPath(ctx *fasthttp.RequestCtx) {
	m, _ := modelPath(string(ctx.Path()))
	if !s.authorized(ctx, "") {
		s.writeError(ctx, &apiError{status: 401, typ: openai.ErrAuthentication, code: "invalid_api_key", msg: "incorrect or missing API key"})
		return
	}
	if !s.modelSet.serves(m) {
		s.writeError(ctx, unknownModel(m))
		return
	}
	b, _ := json.Marshal(openai.Model{ID: m, Object: "model", Created: s.start.Unix(), OwnedBy: "perfgate"})
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// modelPath returns the model named by a /v1/models/{model} path.
func modelPath(path string) (string, bool) {
	m, ok := strings.CutPrefix(path, "/v1/models/")
	return m, ok && m != ""
}

// handleResetPrefixCache answers POST /reset_prefix_cache as vLLM does (in its dev
// mode): the prefix cache is emptied, so the next request finds nothing in it.
func (s *Server) handleResetPrefixCache(ctx *fasthttp.RequestCtx) {
	if !s.authorized(ctx, "") {
		s.writeError(ctx, &apiError{status: 401, typ: openai.ErrAuthentication, code: "invalid_api_key", msg: "incorrect or missing API key"})
		return
	}
	s.met.prefix.Reset()
	ctx.SetStatusCode(fasthttp.StatusOK)
}
