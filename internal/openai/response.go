package openai

import "encoding/json"

// Usage is the token accounting of a response.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CompletionTokensDetails splits CompletionTokens (nil = not sent: no reasoning).
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
	// PromptTokensDetails splits PromptTokens (nil = not sent, as by a vLLM without
	// --enable-prompt-tokens-details).
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails is usage.prompt_tokens_details: how many of the prompt tokens
// the server's prefix cache served.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// CompletionTokensDetails is usage.completion_tokens_details: how many of the
// completion tokens were reasoning.
type CompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// ChatCompletion is a non-streaming chat response.
type ChatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"` // "chat.completion"
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []ChatChoice `json:"choices"`
	Usage             *Usage       `json:"usage,omitempty"`
	SystemFingerprint string       `json:"system_fingerprint,omitempty"`
}

// ChatChoice is one choice of a [ChatCompletion].
type ChatChoice struct {
	Index        int             `json:"index"`
	Message      ResponseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

// ResponseMessage is the assistant message of a [ChatChoice].
type ResponseMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent is the reasoning text before Content (vLLM's reasoning parsers,
	// DeepSeek); omitted when empty.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ToolCalls are the calls the assistant makes instead of answering in Content.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// ChatChunk is one streamed chat chunk ("chat.completion.chunk").
type ChatChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []ChatChunkChoice `json:"choices"`
	Usage   *Usage            `json:"usage,omitempty"`
}

// ChatChunkChoice is one choice of a [ChatChunk]. FinishReason is nil until the last
// content chunk.
type ChatChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is the incremental message of a [ChatChunkChoice].
type Delta struct {
	Role             string `json:"role,omitempty"`
	Content          string `json:"content,omitempty"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// Completion is a non-streaming /v1/completions response, and also the shape of its
// stream chunks (object "text_completion" in both).
type Completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
}

// CompletionChoice is one choice of a [Completion]. FinishReason is nil in stream
// chunks before the last.
type CompletionChoice struct {
	Index        int             `json:"index"`
	Text         string          `json:"text"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

// EmbeddingResponse is a /v1/embeddings response.
type EmbeddingResponse struct {
	Object string      `json:"object"` // "list"
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  Usage       `json:"usage"`
}

// Embedding is one vector of an [EmbeddingResponse]. Embedding holds []float32, or a
// base64 string when the request asked for encoding_format "base64".
type Embedding struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// RankingResponse answers a rankings/rerank request. NIM clients read "rankings"
// (index, logit); Cohere/vLLM clients read "results" (index, relevance_score). Both are
// filled.
type RankingResponse struct {
	ID       string          `json:"id,omitempty"`
	Model    string          `json:"model,omitempty"`
	Rankings []Ranking       `json:"rankings"`
	Results  []RerankResult  `json:"results"`
	Usage    *Usage          `json:"usage,omitempty"`
	Meta     json.RawMessage `json:"meta,omitempty"`
}

// Ranking is one NIM ranking entry.
type Ranking struct {
	Index int     `json:"index"`
	Logit float64 `json:"logit"`
}

// RerankResult is one Cohere/vLLM rerank entry.
type RerankResult struct {
	Index          int        `json:"index"`
	RelevanceScore float64    `json:"relevance_score"`
	Document       *TextField `json:"document,omitempty"`
}

// Model is an entry of the /v1/models list.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelList is the /v1/models response.
type ModelList struct {
	Object string  `json:"object"` // "list"
	Data   []Model `json:"data"`
}

// Response is a Responses API response object (also carried by its stream events).
type Response struct {
	ID        string           `json:"id"`
	Object    string           `json:"object"` // "response"
	CreatedAt int64            `json:"created_at"`
	Status    string           `json:"status"` // "in_progress", "completed", "incomplete"
	Model     string           `json:"model"`
	Output    []ResponseOutput `json:"output"`
	Usage     *ResponseUsage   `json:"usage,omitempty"`
	// IncompleteDetails is set when Status is "incomplete" ({"reason":"max_output_tokens"}).
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// ResponseOutput is an output item (type "message").
type ResponseOutput struct {
	Type    string            `json:"type"`
	ID      string            `json:"id"`
	Status  string            `json:"status"`
	Role    string            `json:"role"`
	Content []ResponseContent `json:"content"`
}

// ResponseContent is an output content part (type "output_text").
type ResponseContent struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// ResponseUsage is the Responses API usage object.
type ResponseUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// Responses API stream event types, in the order a text response emits them.
const (
	EventResponseCreated    = "response.created"
	EventResponseInProgress = "response.in_progress"
	EventOutputItemAdded    = "response.output_item.added"
	EventContentPartAdded   = "response.content_part.added"
	EventOutputTextDelta    = "response.output_text.delta"
	EventOutputTextDone     = "response.output_text.done"
	EventContentPartDone    = "response.content_part.done"
	EventOutputItemDone     = "response.output_item.done"
	EventResponseCompleted  = "response.completed"
	EventResponseIncomplete = "response.incomplete"
	EventResponseFailed     = "response.failed"
)

// ErrorResponse is the OpenAI error envelope: {"error":{…}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody describes an error. Type is e.g. "invalid_request_error",
// "authentication_error", "rate_limit_error", "server_error"; Param names the offending
// field; Code is a short machine-readable code or nil.
type ErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Error types used in [ErrorBody.Type].
const (
	ErrInvalidRequest = "invalid_request_error"
	ErrAuthentication = "authentication_error"
	ErrNotFound       = "not_found_error"
	ErrRateLimit      = "rate_limit_error"
	ErrServer         = "server_error"
	ErrOverloaded     = "overloaded_error"
)

// NewError returns an error envelope; empty param or code become null.
func NewError(typ, message, param, code string) ErrorResponse {
	e := ErrorResponse{Error: ErrorBody{Message: message, Type: typ}}
	if param != "" {
		e.Error.Param = &param
	}
	if code != "" {
		e.Error.Code = &code
	}
	return e
}
