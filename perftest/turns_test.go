package perftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
)

// TestMultiTurnTemplateOverhead checks the per-turn template accounting on a
// three-turn chat with gpt2 (no chat template: the mock renders ChatML, whose markers
// are ordinary text to gpt2 and merge with the contents at the edges). The overhead
// grows with the messages, and since the client renders each request's conversation
// the same way, client and server agree exactly on every request.
func TestMultiTurnTemplateOverhead(t *testing.T) {
	res := Run(t, Scenario{
		Name: "turns",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				Turns: distribution.Spec{Distribution: distribution.Fixed{Value: 3}},
				ISL:   distribution.Spec{Distribution: distribution.Fixed{Value: 32}},
				OSL:   distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
				Seed:  2,
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 12,
			},
		},
	})
	o := res.TemplateOverhead
	if len(o) != 3 || !(0 < o[0] && o[0] < o[1] && o[1] < o[2]) {
		t.Fatalf("TemplateOverhead = %v, want 3 growing overheads", o)
	}
	cs, err := res.Records()
	if err != nil || len(cs) == 0 {
		t.Fatalf("Records() = %d records, %v", len(cs), err)
	}
	for _, c := range cs {
		if c.OK() && c.TokenizationMode != "chat_template_fallback" {
			t.Errorf("request %s: TokenizationMode = %q, want chat_template_fallback", c.RequestID, c.TokenizationMode)
		}
	}
	res.AssertTokenizerMatch(t)
}

// TestChatPayloadsMatchExactly sends chat bodies from a payload file as they are —
// a system prompt, list-of-parts content with an image, add_generation_prompt off —
// and checks that the client's count of each rendered conversation equals the mock's.
func TestChatPayloadsMatchExactly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payloads.jsonl")
	img, _ := media.AppendImageDataURI(nil, media.JPEG, 300, 200, 1) // counted by both sides: 11 x 7 cells + 2
	lines := []string{
		`{"model":"m","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":4}`,
		`{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Name three rivers.\n"}],"max_tokens":4}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"What is in "},{"type":"image_url","image_url":{"url":"` + string(img) + `"}},{"type":"text","text":" this picture?"}]}],"max_tokens":4}`,
		`{"model":"m","add_generation_prompt":false,"messages":[{"role":"user","content":"  spaces at the edges  "}],"max_tokens":4}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := Run(t, Scenario{Name: "payloads", Mock: mockserver.Config{Fast: true}, Config: loadgen.Config{Workload: loadgen.Workload{InputFile: path, InputFormat: "payloads"}, Load: loadgen.Load{Concurrency: 1}}})
	cs, err := res.Records()
	if err != nil || len(cs) != len(lines) {
		t.Fatalf("Records() = %d records, %v; want %d", len(cs), err, len(lines))
	}
	for _, c := range cs {
		if !c.OK() || c.ISL <= 0 || c.ISLTemplate <= c.ISL {
			t.Errorf("request %s: ok=%v ISL=%d ISLTemplate=%d; want contents counted and the template on top", c.RequestID, c.OK(), c.ISL, c.ISLTemplate)
		}
	}
	if cs[2].ImageTokens != 11*7+2 {
		t.Errorf("the image payload's image tokens: %d, want %d", cs[2].ImageTokens, 11*7+2)
	}
	res.AssertTokenizerMatch(t)
}
