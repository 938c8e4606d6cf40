package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// kindFingerprint renders what each API kind does on the request path — the body for
// a grid of turns (alone, with a system prompt and history, each output-cap field,
// streamed or not, a payload), the input count, and the records a whole and a
// streamed answer leave — as text. testdata/kinds.golden holds it as the code
// before the endpoint adapters produced it, so the adapters are shown to change none
// of it; rewrite it with -update only for a documented behaviour change.
func kindFingerprint(t *testing.T) []byte {
	var out bytes.Buffer
	r := newCounter(gpt2(t), map[string]any{"add_generation_prompt": false})
	hist := []message{{Role: "user", Content: "earlier question"}, {Role: "assistant", Content: "earlier answer"}}
	type variant struct {
		name   string
		t      dataset.Turn
		tc     turnCtx
		cfg    Config
		stream bool
	}
	var vs []variant
	for _, stream := range []bool{false, true} {
		for _, field := range []string{"", OSLMaxTokens, OSLMaxCompletionTokens, OSLNone} {
			vs = append(vs,
				variant{"alone field=" + field, dataset.Turn{Prompt: "hello there", Docs: []string{"d1", "d2"}, OSL: 7}, turnCtx{}, Config{Target: Target{Model: "m"}, Workload: Workload{OSLField: field}}, stream},
				variant{"system+history field=" + field, dataset.Turn{Prompt: "next question", OSL: 5}, turnCtx{system: "be brief", history: hist}, Config{Workload: Workload{OSLField: field, MinTokens: true, IgnoreEOS: true}}, stream})
		}
		vs = append(vs,
			variant{"no OSL, no usage, turn fields", dataset.Turn{Prompt: "p", Model: "tm", MaxTokensField: OSLMaxTokens, MinTokens: new(int), IgnoreEOS: new(bool)}, turnCtx{system: "s"}, Config{Target: Target{NoUsage: true}}, stream},
			variant{"payload", dataset.Turn{Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)}, turnCtx{}, Config{}, stream})
	}
	for _, k := range kindSamples() {
		for _, v := range vs {
			bb, err := newBodyBuilder(&v.cfg)
			if err != nil {
				t.Fatal(err)
			}
			stream := v.stream && k.e.generates()
			body := renderBody(bb, k.e, &v.t, &v.tc, stream)
			var rec record.Client
			sc := &scratch{}
			countInput(r, k.e, &v.t, &v.tc, &rec, sc)
			fmt.Fprintf(&out, "%s | %s | stream=%v\n  body %s\n  input isl_template=%d mode=%q\n", k.e, v.name, stream, body, rec.ISLTemplate, rec.TokenizationMode)
		}
		w := newWorker()
		rec, res := &record.Client{UsagePromptTokens: -1, UsageCompletionTokens: -1}, &result{}
		w.parseBody([]byte(k.whole), callFor(k.e), rec, res)
		fmt.Fprintf(&out, "%s | whole\n  %s\n  text %q reasoning %q ends %v\n", k.e, recordLine(rec), res.text, res.reasoning, res.ends)
		if k.events == nil {
			continue
		}
		rec, res = &record.Client{UsagePromptTokens: -1, UsageCompletionTokens: -1}, &result{}
		w.x = exchange{c: callFor(k.e), rec: rec, res: res, cn: &conn{}}
		for _, ev := range k.events {
			w.event(&w.x, ev)
		}
		fmt.Fprintf(&out, "%s | stream sawDone=%v\n  %s\n  text %q ends %v\n", k.e, w.x.sawDone, recordLine(rec), res.text, res.ends)
	}
	return out.Bytes()
}

// recordLine is the part of a record that an answer's parsing fills.
func recordLine(r *record.Client) string {
	return fmt.Sprintf("chunks %+v first_output %v finish %q usage %d/%d reasoning %d error %q %q",
		r.Chunks, r.FirstOutput, r.FinishReason, r.UsagePromptTokens, r.UsageCompletionTokens, r.UsageReasoningTokens, r.ErrorKind, r.Error)
}

func TestKindsUnchanged(t *testing.T) {
	got := kindFingerprint(t)
	const path = "testdata/kinds.golden"
	if *updateDocs {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("%s: line %d differs:\ngot  %s\nwant %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", path, len(gl), len(wl))
	}
}

// maxTokensChat is chat with completions' output-cap default: a behaviour change the
// fingerprint must see.
type maxTokensChat struct{ chatAPI }

func (maxTokensChat) capOutput(w *wireBody, field string, osl *int) { capOpenAI(w, field, osl, true) }

func (k maxTokensChat) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

// The failure path of TestKindsUnchanged: one kind sending another cap field changes
// the fingerprint.
func TestKindsFingerprintSeesAChange(t *testing.T) {
	before := kindFingerprint(t)
	saved := apis
	apis = append([]apiEntry(nil), apis...)
	apis[0] = apiEntry{EndpointChat, maxTokensChat{}}
	t.Cleanup(func() { apis = saved })
	if bytes.Equal(before, kindFingerprint(t)) {
		t.Error("chat sending max_tokens by default left the fingerprint unchanged")
	}
}
