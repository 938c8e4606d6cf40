package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/scenario"
)

// docBlock returns the fenced block after the marker line in the doc at path.
func docBlock(t *testing.T, path, marker string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker+"\n")
	if !ok {
		t.Fatalf("%s has no %q", path, marker)
	}
	_, body, ok := strings.Cut(after, "\n") // the opening fence
	block, _, closed := strings.Cut(body, "```")
	if !ok || !closed {
		t.Fatalf("%s: no fenced block after %q", path, marker)
	}
	return block
}

// TestAgentsDocScenario decodes docs/agents.md's scenario file and runs it against
// the mock: synthetic jobs under user-centric timing, as the page says.
func TestAgentsDocScenario(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent-jobs.yaml")
	if err := os.WriteFile(path, []byte(docBlock(t, "../../docs/agents.md", "<!-- scenario-file: agent-jobs.yaml -->")), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sc.SubAgents != 3 || sc.SubAgentAfterTurn != 1 || sc.SubAgentTurns != 2 || sc.UserCentricRate != 200 || sc.Concurrency != 4 {
		t.Fatalf("decoded %+v; want the page's jobs and timing", sc.Config)
	}
	o, err := Run(context.Background(), sc, filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := o.Metrics
	if n := m.Scalars["request_count"].Value; n != 40 {
		t.Errorf("request_count = %v; want 40", n)
	}
	// Jobs the request count or the virtual history cut before their fan-out have
	// none: the mean is over 0 to 3.
	if f, ok := m.Scalars["subagent_fanout"]; !ok || f.Value <= 0 || f.Value > 3 {
		t.Errorf("subagent_fanout = %v (reported %v); want in (0, 3]", f.Value, ok)
	}
	if len(m.TTFTByTurn) == 0 {
		t.Error("metrics.json has no ttft_by_turn")
	}
}
