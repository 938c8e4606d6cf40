package mockserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/tokenizer"
)

// TestOpenAINodeSDK drives the server with the official OpenAI Node SDK (npm "openai")
// and checks every token count it reports against a Go re-count of the text it got.
func TestOpenAINodeSDK(t *testing.T) {
	s := start(t, Config{Fast: true, APIKey: "sk-node"})
	cmd := testutil.Node(t, "testdata/node_client.cjs", s.BaseURL(), "sk-node")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	type usage struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Input      int `json:"input_tokens"`
		Output     int `json:"output_tokens"`
	}
	var got struct {
		Chat struct {
			Text, Finish string
			Usage        usage
		}
		ChatStream struct {
			Text   string
			Chunks int
			Usage  usage
		} `json:"chat_stream"`
		Completion struct {
			Text  string
			Usage usage
		}
		CompletionStream struct {
			Text  string
			Usage usage
		} `json:"completion_stream"`
		Embeddings struct {
			N, Dim int
			Usage  usage
		}
		ResponsesStream struct {
			Text  string
			Usage usage
			Types []string
		} `json:"responses_stream"`
		WrongKey struct {
			Status int
			Type   string
		} `json:"wrong_key"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode node output %s: %v", out, err)
	}
	tok := gpt2(t)
	prompt := "Summarise the plot of a benchmark in one line."
	chatISL := tok.Count(tokenizer.RenderChatMLFallback([]tokenizer.Message{{Role: "user", Content: prompt}}, true), false)
	check := func(name, text string, u usage, wantOut, wantIn int) {
		t.Helper()
		if n := tok.Count(text, false); n != wantOut || u.Completion+u.Output != wantOut || u.Prompt+u.Input != wantIn {
			t.Errorf("%s: re-count %d, usage %+v; want %d output, %d input", name, n, u, wantOut, wantIn)
		}
	}
	check("chat", got.Chat.Text, got.Chat.Usage, 21, chatISL)
	check("chat stream (list content)", got.ChatStream.Text, got.ChatStream.Usage, 25, chatISL)
	if got.ChatStream.Chunks != 25 {
		t.Errorf("chat stream chunks = %d, want 25", got.ChatStream.Chunks)
	}
	check("completion", got.Completion.Text, got.Completion.Usage, 13, tok.Count(prompt, false))
	check("completion stream", got.CompletionStream.Text, got.CompletionStream.Usage, 11, tok.Count(prompt, false))
	if got.Embeddings.N != 2 || got.Embeddings.Dim != DefaultEmbeddingDim || got.Embeddings.Usage.Prompt != tok.Count(prompt, false)+tok.Count("two", false) {
		t.Errorf("embeddings = %+v", got.Embeddings)
	}
	check("responses stream", got.ResponsesStream.Text, got.ResponsesStream.Usage, 7, tok.Count(prompt, false))
	for _, typ := range []string{"response.created", "response.output_text.delta", "response.output_text.done", "response.completed"} {
		if !slices.Contains(got.ResponsesStream.Types, typ) {
			t.Errorf("responses stream events %v lack %s", got.ResponsesStream.Types, typ)
		}
	}
	if got.WrongKey.Status != 401 {
		t.Errorf("wrong key: status %d, want 401", got.WrongKey.Status)
	}
}
