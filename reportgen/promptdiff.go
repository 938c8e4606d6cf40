package reportgen

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
)

// Prompt is one request's prompt as a capture holds it: its arrival number, the
// request id the client set ("" = none) and the prompt text (a chat request's messages
// as "role: content" lines, a completion's prompt).
type Prompt struct {
	Seq       uint64
	RequestID string
	Text      string
}

// PromptDiff is the comparison of the prompts two clients sent (two captures).
type PromptDiff struct {
	// LabelA and LabelB name the captures.
	LabelA, LabelB string
	// NA and NB count the prompts on each side.
	NA, NB int
	// MatchedBy is "request id" (both sides set ids and share some) or "content"
	// (identical prompts paired whatever their order; the rest paired in arrival order).
	MatchedBy string
	// Pairs are the differing prompts: pairs whose texts differ, then prompts with no
	// partner (A or B nil), in A's arrival order.
	Pairs []PromptPair
}

// Total is M of "N / M prompts differ": the larger side's count.
func (d PromptDiff) Total() int { return max(d.NA, d.NB) }

// Differ is N of "N / M prompts differ".
func (d PromptDiff) Differ() int { return len(d.Pairs) }

// PromptPair is one differing pair: At is the first differing character (rune index;
// the shorter text's length when one is a prefix of the other), and Before, AfterA and
// AfterB a short context: the common text before At and each side's text from At.
type PromptPair struct {
	A, B                   *Prompt
	At                     int
	Before, AfterA, AfterB string
}

// diffContext is how many characters of context a pair shows each side of At.
const diffContext = 40

// DiffPrompts matches a's prompts with b's and lists those that differ: by request id
// when every prompt on both sides has one and the sides share at least one, else by
// content, as out-of-order arrivals need.
func DiffPrompts(a, b []Prompt, labelA, labelB string) PromptDiff {
	d := PromptDiff{LabelA: labelA, LabelB: labelB, NA: len(a), NB: len(b), MatchedBy: "content"}
	if byID(a, b) {
		d.MatchedBy = "request id"
		ib := map[string]int{}
		for i := range b {
			ib[b[i].RequestID] = i
		}
		used := make([]bool, len(b))
		for i := range a {
			j, ok := ib[a[i].RequestID]
			if !ok {
				d.Pairs = append(d.Pairs, PromptPair{A: &a[i]})
				continue
			}
			used[j] = true
			if a[i].Text != b[j].Text {
				d.Pairs = append(d.Pairs, pairOf(&a[i], &b[j]))
			}
		}
		for j := range b {
			if !used[j] {
				d.Pairs = append(d.Pairs, PromptPair{B: &b[j]})
			}
		}
		return d
	}
	// By content: identical texts pair up (as many times as both sides have them).
	left := map[string][]int{}
	for j := range b {
		left[b[j].Text] = append(left[b[j].Text], j)
	}
	matchedB := make([]bool, len(b))
	var restA []int
	for i := range a {
		if js := left[a[i].Text]; len(js) > 0 {
			matchedB[js[0]] = true
			left[a[i].Text] = js[1:]
			continue
		}
		restA = append(restA, i)
	}
	var restB []int
	for j := range b {
		if !matchedB[j] {
			restB = append(restB, j)
		}
	}
	bySeq := func(p []Prompt) func(x, y int) int {
		return func(x, y int) int { return cmp.Compare(p[x].Seq, p[y].Seq) }
	}
	slices.SortStableFunc(restA, bySeq(a))
	slices.SortStableFunc(restB, bySeq(b))
	for k := range max(len(restA), len(restB)) {
		switch {
		case k < len(restA) && k < len(restB):
			d.Pairs = append(d.Pairs, pairOf(&a[restA[k]], &b[restB[k]]))
		case k < len(restA):
			d.Pairs = append(d.Pairs, PromptPair{A: &a[restA[k]]})
		default:
			d.Pairs = append(d.Pairs, PromptPair{B: &b[restB[k]]})
		}
	}
	return d
}

func byID(a, b []Prompt) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	ids := map[string]bool{}
	for _, p := range a {
		if p.RequestID == "" {
			return false
		}
		ids[p.RequestID] = true
	}
	shared := false
	for _, p := range b {
		if p.RequestID == "" {
			return false
		}
		shared = shared || ids[p.RequestID]
	}
	return shared
}

// pairOf finds where two texts first differ and cuts the context around it.
func pairOf(a, b *Prompt) PromptPair {
	ra, rb := []rune(a.Text), []rune(b.Text)
	at := 0
	for at < len(ra) && at < len(rb) && ra[at] == rb[at] {
		at++
	}
	cut := func(r []rune, from, to int) string {
		return string(r[max(from, 0):min(to, len(r))])
	}
	return PromptPair{A: a, B: b, At: at, Before: cut(ra, at-diffContext, at), AfterA: cut(ra, at, at+diffContext), AfterB: cut(rb, at, at+diffContext)}
}

// Summary is the console's verdict line: "N / M prompts differ (matched by …)".
func (d PromptDiff) Summary() string {
	return fmt.Sprintf("%d / %d prompts differ (%s: %d, %s: %d; matched by %s)", d.Differ(), d.Total(), d.LabelA, d.NA, d.LabelB, d.NB, d.MatchedBy)
}

// WriteText writes the summary line and the first show differing pairs: each side's
// arrival number and id, the first differing character and the context around it.
func (d PromptDiff) WriteText(w io.Writer, show int) error {
	var b strings.Builder
	b.WriteString(d.Summary() + "\n")
	for k, p := range d.Pairs {
		if k == show {
			fmt.Fprintf(&b, "... and %d more (the HTML view lists the first %d)\n", len(d.Pairs)-show, show)
			break
		}
		switch {
		case p.B == nil:
			fmt.Fprintf(&b, "  only in %s: %s\n", d.LabelA, describe(p.A))
		case p.A == nil:
			fmt.Fprintf(&b, "  only in %s: %s\n", d.LabelB, describe(p.B))
		default:
			fmt.Fprintf(&b, "  %s / %s: first diff at char %d\n", describe(p.A), describe(p.B), p.At)
			fmt.Fprintf(&b, "    %s: %q\n", d.LabelA, "…"+p.Before+"⟦"+p.AfterA+"⟧")
			fmt.Fprintf(&b, "    %s: %q\n", d.LabelB, "…"+p.Before+"⟦"+p.AfterB+"⟧")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func describe(p *Prompt) string {
	s := fmt.Sprintf("#%d", p.Seq)
	if p.RequestID != "" {
		s += " (" + p.RequestID + ")"
	}
	return s + fmt.Sprintf(", %d chars", len([]rune(p.Text)))
}

type promptDiffPage struct {
	Title   string
	CSS     template.CSS
	D       PromptDiff
	Summary string
	Shown   []PromptPair
	More    int
	Desc    func(*Prompt) string
}

var promptDiffTmpl = mustPage(`<h1>{{.Title}}</h1>
<p id="diff-summary" class="verdict {{if .D.Pairs}}fail{{else}}pass{{end}}">{{.Summary}}</p>
{{if .Shown}}<div id="diffs">{{range $i, $p := .Shown}}<div class="card diff">
{{if not $p.B}}<h3>only in {{$.D.LabelA}}: {{call $.Desc $p.A}}</h3><pre class="side-a">{{$p.A.Text}}</pre>
{{else if not $p.A}}<h3>only in {{$.D.LabelB}}: {{call $.Desc $p.B}}</h3><pre class="side-b">{{$p.B.Text}}</pre>
{{else}}<h3>{{call $.Desc $p.A}} / {{call $.Desc $p.B}}: first difference at character {{$p.At}}</h3>
<table class="diff-ctx"><tbody>
<tr><th class="l">{{$.D.LabelA}}</th><td class="l"><code>…{{$p.Before}}<mark class="del">{{$p.AfterA}}</mark>…</code></td></tr>
<tr><th class="l">{{$.D.LabelB}}</th><td class="l"><code>…{{$p.Before}}<mark class="ins">{{$p.AfterB}}</mark>…</code></td></tr>
</tbody></table>{{end}}</div>{{end}}</div>
{{if .More}}<p class="sub">… and {{.More}} more differing prompts (the console lists them all with --show).</p>{{end}}
{{else}}<p class="pass">Every prompt of one capture has an identical partner in the other.</p>{{end}}
`)

// WritePromptDiffReport writes the HTML view of d: the summary line and the first show
// differences, each with the first differing character highlighted in its context.
func WritePromptDiffReport(w io.Writer, d PromptDiff, show int) error {
	p := promptDiffPage{Title: "perfgate capture diff: " + d.LabelA + " vs " + d.LabelB, CSS: css, D: d, Summary: d.Summary(), Desc: describe}
	p.Shown = d.Pairs[:min(show, len(d.Pairs))]
	p.More = len(d.Pairs) - len(p.Shown)
	return render(w, promptDiffTmpl, p)
}
