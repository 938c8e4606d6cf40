package openai

import "strings"

// This file holds the facts about each API kind that the load generator and the mock
// server must agree on: the names configurations, recordings and client records call
// the kinds by, the paths they are served at, and the headers beyond the OpenAI ones.

// API kinds, by the names configurations (endpoint_type), recordings and client
// records use.
const (
	KindChat        = "chat"        // OpenAI chat completions
	KindCompletions = "completions" // OpenAI (legacy) completions
	KindEmbeddings  = "embeddings"  // OpenAI embeddings
	KindRankings    = "rankings"    // NVIDIA NIM ranking: query + passages
	KindRerank      = "rerank"      // vLLM/Cohere rerank: query + documents
	KindResponses   = "responses"   // OpenAI Responses API
	KindMessages    = "messages"    // Anthropic Messages API
	// KindTranscriptions is OpenAI speech to text (multipart upload in); KindImages
	// OpenAI image generation. Their names are AIPerf's --endpoint-type values.
	KindTranscriptions = "audio_transcription"
	KindImages         = "image_generation"
)

// API paths: where a client sends each kind by default and where the mock serves it.
const (
	PathChat        = "/v1/chat/completions"
	PathCompletions = "/v1/completions"
	PathEmbeddings  = "/v1/embeddings"
	PathRanking     = "/v1/ranking" // NIM's path; the mock also serves /v1/rankings
	PathRerank      = "/v1/rerank"  // vLLM's path; the mock also serves /rerank (TEI) and /v2/rerank (Cohere)
	PathResponses   = "/v1/responses"
	PathMessages    = "/v1/messages"
	PathModels      = "/v1/models"

	PathTranscriptions = "/v1/audio/transcriptions"
	PathImages         = "/v1/images/generations"
)

// kindPaths maps each kind to its path, in the order [KindOfPath] tries them (a path
// that ends another one comes after it).
var kindPaths = [...][2]string{
	{KindChat, PathChat},
	{KindCompletions, PathCompletions},
	{KindEmbeddings, PathEmbeddings},
	{KindRankings, PathRanking},
	{KindRerank, PathRerank},
	{KindResponses, PathResponses},
	{KindMessages, PathMessages},
	{KindTranscriptions, PathTranscriptions},
	{KindImages, PathImages},
}

// KindOfPath returns the API kind a request path is for, by its last segments
// ("/v1/chat/completions" or any path ending in "/chat/completions" is chat), or "".
func KindOfPath(p string) string {
	for _, kp := range kindPaths {
		if strings.HasSuffix(p, strings.TrimPrefix(kp[1], "/v1")) {
			return kp[0]
		}
	}
	return ""
}

// Anthropic's headers: the key header the Messages API takes instead of a bearer
// token, and the version header every request carries, with the version sent when a
// client sets none.
const (
	HeaderAPIKey           = "X-Api-Key"
	HeaderAnthropicVersion = "Anthropic-Version"
	AnthropicVersion       = "2023-06-01"
)
