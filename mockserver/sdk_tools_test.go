package mockserver

import (
	"context"
	"encoding/json"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/perfgate/perfgate/distribution"
)

// TestOpenAIGoSDKToolCalls: the official Go SDK reads the mock's tool calls whole
// and streamed (its accumulator joins the deltas), with usage counting the arguments,
// and sends the tool's result back as the next turn (a tool message), which the mock
// answers in text.
func TestOpenAIGoSDKToolCalls(t *testing.T) {
	s := start(t, Config{Fast: true, ToolCallTokens: distribution.MustSpec("fixed:9")})
	tok := gpt2(t)
	client := oai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	ctx := context.Background()
	tools := []oai.ChatCompletionToolUnionParam{
		oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}}),
	}
	msgs := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("What is the weather in Paris?")}
	check := func(t *testing.T, name, args string, completion int64) {
		t.Helper()
		var a map[string]any
		if name != "get_weather" || json.Unmarshal([]byte(args), &a) != nil {
			t.Errorf("call %s(%s); want get_weather with JSON arguments", name, args)
		}
		if n := tok.Count(args, false); int64(n) != completion {
			t.Errorf("usage.completion_tokens %d; the arguments re-count to %d", completion, n)
		}
	}
	t.Run("whole", func(t *testing.T) {
		resp, err := client.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "mock-model", Messages: msgs, Tools: tools, MaxCompletionTokens: oai.Int(64)})
		if err != nil {
			t.Fatal(err)
		}
		c := resp.Choices[0]
		if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 {
			t.Fatalf("finish %q, %d calls; want tool_calls, 1", c.FinishReason, len(c.Message.ToolCalls))
		}
		call := c.Message.ToolCalls[0]
		check(t, call.Function.Name, call.Function.Arguments, resp.Usage.CompletionTokens)
		// The tool's result goes back as the next turn.
		next := append(append([]oai.ChatCompletionMessageParamUnion{}, msgs...), c.Message.ToParam(), oai.ToolMessage("18 degrees and sunny", call.ID))
		resp2, err := client.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "mock-model", Messages: next, Tools: tools,
			ToolChoice: oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String("none")}, MaxCompletionTokens: oai.Int(5)})
		if err != nil {
			t.Fatal(err)
		}
		if r := resp2.Choices[0]; r.Message.Content == "" || len(r.Message.ToolCalls) != 0 {
			t.Errorf("answer to the tool result: %+v; want text", r.Message)
		}
	})
	t.Run("stream", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, oai.ChatCompletionNewParams{Model: "mock-model", Messages: msgs, Tools: tools,
			MaxCompletionTokens: oai.Int(64), StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}})
		acc := oai.ChatCompletionAccumulator{}
		finished := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			if _, ok := acc.JustFinishedToolCall(); ok {
				finished++
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		c := acc.Choices[0]
		if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || finished != 1 {
			t.Fatalf("finish %q, %d calls, %d finished; want tool_calls, 1, 1", c.FinishReason, len(c.Message.ToolCalls), finished)
		}
		call := c.Message.ToolCalls[0]
		check(t, call.Function.Name, call.Function.Arguments, acc.Usage.CompletionTokens)
	})
}
