package mockserver

import (
	"context"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/perfgate/perfgate/tokenizer"
)

// TestOpenAIGoSDK drives the server with the official Go SDK, streaming and not, chat,
// completions and embeddings, and checks the token counts it reports against a
// re-count of the text it received.
func TestOpenAIGoSDK(t *testing.T) {
	s := start(t, Config{Fast: true, APIKey: "sk-test"})
	tok := gpt2(t)
	client := oai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	ctx := context.Background()
	prompt := "Write a haiku about load testing."
	wantISL := tok.Count(tokenizer.RenderChatMLFallback([]tokenizer.Message{{Role: "user", Content: prompt}}, true), false)

	t.Run("chat", func(t *testing.T) {
		resp, err := client.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{
			Model: "mock-model", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(prompt)},
			MaxCompletionTokens: oai.Int(33),
		}, option.WithJSONSet("ignore_eos", true))
		if err != nil {
			t.Fatal(err)
		}
		text := resp.Choices[0].Message.Content
		if got := tok.Count(text, false); got != 33 || resp.Usage.CompletionTokens != 33 || resp.Usage.PromptTokens != int64(wantISL) {
			t.Errorf("re-count %d, usage %+v; want 33 completion, %d prompt", got, resp.Usage, wantISL)
		}
		if resp.Choices[0].FinishReason != "length" {
			t.Errorf("finish_reason = %q, want length", resp.Choices[0].FinishReason)
		}
	})
	t.Run("chat stream", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, oai.ChatCompletionNewParams{
			Model: "mock-model", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(prompt)},
			MaxTokens: oai.Int(40), StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
		}, option.WithJSONSet("ignore_eos", true))
		acc := oai.ChatCompletionAccumulator{}
		chunks := 0
		for stream.Next() {
			c := stream.Current()
			acc.AddChunk(c)
			if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				chunks++
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		text := acc.Choices[0].Message.Content
		if got := tok.Count(text, false); got != 40 || acc.Usage.CompletionTokens != 40 || acc.Usage.PromptTokens != int64(wantISL) || chunks != 40 {
			t.Errorf("re-count %d, chunks %d, usage %+v; want 40, 40, prompt %d", got, chunks, acc.Usage, wantISL)
		}
	})
	t.Run("completions", func(t *testing.T) {
		p := "The quick brown fox"
		resp, err := client.Completions.New(ctx, oai.CompletionNewParams{
			Model: "mock-model", Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String(p)}, MaxTokens: oai.Int(17),
		}, option.WithJSONSet("ignore_eos", true))
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(resp.Choices[0].Text, false); got != 17 || resp.Usage.CompletionTokens != 17 || resp.Usage.PromptTokens != int64(tok.Count(p, false)) {
			t.Errorf("re-count %d, usage %+v", got, resp.Usage)
		}
	})
	t.Run("completions stream", func(t *testing.T) {
		stream := client.Completions.NewStreaming(ctx, oai.CompletionNewParams{
			Model: "mock-model", Prompt: oai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{464, 2068, 7586}}, MaxTokens: oai.Int(9),
			StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
		}, option.WithJSONSet("ignore_eos", true))
		text := ""
		var usage oai.CompletionUsage
		for stream.Next() {
			c := stream.Current()
			if len(c.Choices) > 0 {
				text += c.Choices[0].Text
			}
			if c.Usage.TotalTokens > 0 {
				usage = c.Usage
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(text, false); got != 9 || usage.CompletionTokens != 9 || usage.PromptTokens != 3 {
			t.Errorf("re-count %d, usage %+v; want 9 completion, 3 prompt", got, usage)
		}
	})
	t.Run("embeddings", func(t *testing.T) {
		in := []string{"first input", "second, longer input text"}
		resp, err := client.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "mock-embed",
			Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: in}})
		if err != nil {
			t.Fatal(err)
		}
		want := tok.Count(in[0], false) + tok.Count(in[1], false)
		if len(resp.Data) != 2 || len(resp.Data[0].Embedding) != DefaultEmbeddingDim || resp.Usage.PromptTokens != int64(want) {
			t.Errorf("got %d vectors of %d, usage %+v; want 2 of %d, prompt %d", len(resp.Data), len(resp.Data[0].Embedding), resp.Usage, DefaultEmbeddingDim, want)
		}
	})
	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 || page.Data[0].ID != DefaultModel {
			t.Errorf("models = %+v", page.Data)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		bad := oai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithAPIKey("nope"), option.WithMaxRetries(0))
		_, err := bad.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "m", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("x")}})
		var apiErr *oai.Error
		if err == nil || !asErr(err, &apiErr) || apiErr.StatusCode != 401 {
			t.Errorf("error = %v, want a 401 *openai.Error", err)
		}
	})
}
