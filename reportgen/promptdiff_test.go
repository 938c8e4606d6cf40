package reportgen

import (
	"bytes"
	"strings"
	"testing"
)

func prompts(texts ...string) []Prompt {
	ps := make([]Prompt, len(texts))
	for i, t := range texts {
		ps[i] = Prompt{Seq: uint64(i + 1), Text: t}
	}
	return ps
}

// TestDiffPromptsByContent: prompts arriving in another order match by content; the
// one that differs is reported with its first differing character and context.
func TestDiffPromptsByContent(t *testing.T) {
	a := prompts("user: alpha", "user: bravo", "user: charlie delta")
	b := prompts("user: charlie echo", "user: alpha", "user: bravo")
	d := DiffPrompts(a, b, "A", "B")
	if d.MatchedBy != "content" || d.Differ() != 1 || d.Total() != 3 {
		t.Fatalf("%s; want 1 / 3 by content", d.Summary())
	}
	p := d.Pairs[0]
	if p.At != 14 || p.AfterA != "delta" || p.AfterB != "echo" || p.Before != "user: charlie " {
		t.Errorf("pair = %+v, want first diff at 14 after %q", p, "user: charlie ")
	}
	var buf bytes.Buffer
	if err := d.WriteText(&buf, 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "1 / 3 prompts differ") || !strings.Contains(buf.String(), "first diff at char 14") {
		t.Errorf("text:\n%s", buf.String())
	}
}

// TestDiffPromptsByID: with request ids on both sides, prompts pair by id (equal texts
// under other ids differ), and prompts without a partner are listed.
func TestDiffPromptsByID(t *testing.T) {
	a := []Prompt{{1, "r1", "x"}, {2, "r2", "y"}, {3, "r3", "z"}}
	b := []Prompt{{1, "r2", "y"}, {2, "r1", "y"}, {3, "r4", "z"}}
	d := DiffPrompts(a, b, "A", "B")
	if d.MatchedBy != "request id" || d.Differ() != 3 {
		t.Fatalf("%s, want 3 differences by request id", d.Summary())
	}
	if d.Pairs[0].A.RequestID != "r1" || d.Pairs[1].B != nil || d.Pairs[2].A != nil {
		t.Errorf("pairs = %+v", d.Pairs)
	}
	// Ids that share nothing (two tools' random ids) fall back to content.
	b2 := []Prompt{{1, "u1", "z"}, {2, "u2", "x"}, {3, "u3", "y"}}
	if d := DiffPrompts(a, b2, "A", "B"); d.MatchedBy != "content" || d.Differ() != 0 {
		t.Errorf("%s, want 0 differences by content", d.Summary())
	}
}

// TestDiffPromptsPrefixAndHTML: a prompt that is a prefix of the other differs at its
// end; the HTML view shows the first differences highlighted and counts the rest.
func TestDiffPromptsPrefixAndHTML(t *testing.T) {
	a := prompts("same", "abc", "one <b>", "two")
	b := prompts("same", "abcdef", "one <i>", "three")
	d := DiffPrompts(a, b, "A", "B")
	if d.Differ() != 3 || d.Pairs[0].At != 3 || d.Pairs[0].AfterA != "" || d.Pairs[0].AfterB != "def" {
		t.Fatalf("%s %+v", d.Summary(), d.Pairs)
	}
	var buf bytes.Buffer
	if err := WritePromptDiffReport(&buf, d, 2); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Count(out, `class="card diff"`) != 2 || !strings.Contains(out, "and 1 more") || !strings.Contains(out, `<mark class="ins">def</mark>`) ||
		!strings.Contains(out, "3 / 4 prompts differ") || strings.Contains(out, "<b>") {
		t.Errorf("HTML view:\n%s", out)
	}
}
