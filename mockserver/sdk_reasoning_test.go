package mockserver

import (
	"context"
	"encoding/json"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
)

// TestOpenAIGoSDKReasoning reads the mock's reasoning stream with the official Go SDK:
// reasoning_content (an extra field to the SDK) arrives in chunks before any content,
// and the usage chunk splits the completion tokens with
// completion_tokens_details.reasoning_tokens.
func TestOpenAIGoSDKReasoning(t *testing.T) {
	s := start(t, Config{Fast: true, ReasoningTokens: fixedSpec(t, "fixed:9")})
	tok := gpt2(t)
	client := oai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), oai.ChatCompletionNewParams{
		Model: "mock-model", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("think first")},
		MaxTokens: oai.Int(30), StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}, option.WithJSONSet("ignore_eos", true))
	var reasoning, content string
	var usage oai.CompletionUsage
	for stream.Next() {
		c := stream.Current()
		if c.JSON.Usage.Valid() {
			usage = c.Usage
		}
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if f, ok := d.JSON.ExtraFields["reasoning_content"]; ok {
			var r string
			if err := json.Unmarshal([]byte(f.Raw()), &r); err != nil {
				t.Fatalf("reasoning_content %s: %v", f.Raw(), err)
			}
			if content != "" {
				t.Errorf("reasoning %q after content", r)
			}
			reasoning += r
		}
		content += d.Content
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := tok.Count(reasoning, false); got != 9 {
		t.Errorf("reasoning re-counts to %d, want 9", got)
	}
	if got := tok.Count(content, false); got != 21 {
		t.Errorf("content re-counts to %d, want 21", got)
	}
	if usage.CompletionTokens != 30 || usage.CompletionTokensDetails.ReasoningTokens != 9 {
		t.Errorf("usage %+v, want 30 completion tokens of which 9 reasoning", usage)
	}
}
