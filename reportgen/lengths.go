package reportgen

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/distribution"
)

// RunLengths is what the run report's "Input and output lengths" section draws besides
// the client's own counts (which come from the records): what the server received,
// the lengths the fit checks measure, and the configured targets. The zero value
// draws the client's counts only.
type RunLengths struct {
	// ServerISL and ServerOSL are the input and output lengths the server counted for
	// the measured requests (the mock's recording: chat-template tokens included in
	// the ISL); nil when there is no server recording.
	ServerISL, ServerOSL []int
	// ServerModes counts the server's requests by tokenization mode.
	ServerModes map[string]int
	// ISL and OSL are the fits: the lengths the length checks measure, their target
	// and the verdict.
	ISL, OSL LengthFit
	// Counts, when set, are the run's mean input counts (as the console says them);
	// nil computes them from the records and ServerISL.
	Counts *ISLCounts
}

// LengthFit is one length check as the report draws it.
type LengthFit struct {
	// Source says whose count Lengths are ("server count", "client count", …).
	Source string
	// Lengths are the lengths the check measures; nil = the client's counts.
	Lengths []int
	// Target is the configured distribution (Target.Dist nil = none drawn).
	Target distribution.Length
	// Verdict is the fit verdict against Target, shown under the chart; nil = none.
	// Asserted says it is one of the run's assertions (else it is shown for
	// information: the run is not gated on it).
	Verdict  *Verdict
	Asserted bool
}

// ISLCounts are a run's mean input length per request as each side counted it: the
// client's count of the message contents, the chat-template tokens around them, and
// what the server counted.
type ISLCounts struct {
	// Content is the mean client count (the ISL row of the summary table).
	Content float64
	// Template is the mean chat-template overhead of the requests whose overhead the
	// client counted (record.Client.TemplateOverhead); TemplateN is how many did.
	Template  float64
	TemplateN int
	// Modes are the tokenization modes the template tokens were counted in.
	Modes []string
	// Server is the mean count of the server (the mock's recording); HasServer false
	// when there is none.
	Server    float64
	HasServer bool
}

// ISLCountsOf computes the counts from per-request values: the client's ISL, the
// template overheads known, the modes they were counted in, and the server's ISL
// (nil when there is no server recording).
func ISLCountsOf(isl, overhead []float64, modes map[string]int, server []int) ISLCounts {
	c := ISLCounts{Content: mean(isl), Template: mean(overhead), TemplateN: len(overhead), Modes: slices.Sorted(maps.Keys(modes))}
	if server != nil {
		c.Server, c.HasServer = mean(ints(server)), true
	}
	return c
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Note is one console line saying why two input counts differ: what the server
// counted is the content plus the chat template ("" when the counts agree or no
// template was counted).
//
//	ISL counts message contents: 128.13 tokens a request; the server counted 155.13: + 27.00 tokens of chat template (chat_template_fallback)
func (c ISLCounts) Note() string {
	if c.TemplateN == 0 && !(c.HasServer && num(c.Server) != num(c.Content)) {
		return ""
	}
	mode := ""
	if len(c.Modes) > 0 {
		mode = " (" + strings.Join(c.Modes, ", ") + ")"
	}
	switch {
	case c.HasServer && c.TemplateN > 0:
		if num(c.Server) == num(c.Content) && c.Template == 0 {
			return ""
		}
		return fmt.Sprintf("ISL counts message contents: %s tokens a request; the server counted %s: + %s tokens of chat template%s",
			num(c.Content), num(c.Server), num(c.Template), mode)
	case c.HasServer:
		return fmt.Sprintf("ISL counts message contents: %s tokens a request; the server counted %s (%s more; the client did not count the chat template)",
			num(c.Content), num(c.Server), signed(c.Server-c.Content))
	case c.Template > 0:
		return fmt.Sprintf("ISL counts message contents: %s tokens a request; with the chat template a server counts %s (+ %s tokens%s)",
			num(c.Content), num(c.Content+c.Template), num(c.Template), mode)
	}
	return ""
}

// lengthRow is one line of the report's lengths table.
type lengthRow struct {
	Name, By                 string
	N                        int
	Mean, P50, Min, Max, Std string
}

func lengthRowOf(name, by string, v []float64) lengthRow {
	s := summarize(v)
	return lengthRow{Name: name, By: by, N: s.N, Mean: num(s.Mean), P50: num(s.P50), Min: num(s.Min), Max: num(s.Max), Std: num(s.Std)}
}

// lengthsPage is the "Input and output lengths" section of the run report.
type lengthsPage struct {
	Rows    []lengthRow
	Figures []figure
	Note    string
}

// lengthsSection builds the section from the run's per-request values and l (nil = the
// client's counts only).
func lengthsSection(p perRequest, l *RunLengths) lengthsPage {
	if l == nil {
		l = &RunLengths{}
	}
	var sec lengthsPage
	counts := ISLCountsOf(p.isl, p.overhead, p.tplModes, l.ServerISL)
	if l.Counts != nil {
		counts = *l.Counts
	}
	sec.Note = counts.Note()
	modes := strings.Join(counts.Modes, ", ")
	sec.Rows = append(sec.Rows, lengthRowOf("ISL sent: message contents", "client tokenizer", p.isl))
	if len(p.overhead) > 0 {
		sec.Rows = append(sec.Rows,
			lengthRowOf("ISL sent: with the chat template", "client tokenizer, "+modes, p.islTpl),
			lengthRowOf("chat-template tokens of a request", "client tokenizer, "+modes, p.overhead))
	}
	if l.ServerISL != nil {
		sec.Rows = append(sec.Rows, lengthRowOf("ISL received", "server ("+modeList(l.ServerModes)+")", ints(l.ServerISL)))
	}
	if l.ISL.Lengths != nil {
		sec.Rows = append(sec.Rows, lengthRowOf("ISL as the length check measures it", l.ISL.Source, ints(l.ISL.Lengths)))
	}
	sec.Rows = append(sec.Rows, lengthRowOf("OSL received", "client tokenizer", p.osl))
	if l.ServerOSL != nil {
		sec.Rows = append(sec.Rows, lengthRowOf("OSL generated", "server", ints(l.ServerOSL)))
	}
	if l.OSL.Lengths != nil {
		sec.Rows = append(sec.Rows, lengthRowOf("OSL as the length check measures it", l.OSL.Source, ints(l.OSL.Lengths)))
	}

	for _, m := range []struct {
		id, name, sentLabel, srvLabel string
		sent                          []float64
		server                        []int
		fit                           LengthFit
	}{
		{"isl", "Input sequence length", "sent: message contents", "server received", p.isl, l.ServerISL, l.ISL},
		{"osl", "Output sequence length", "received by the client", "server generated", p.osl, l.ServerOSL, l.OSL},
	} {
		sets := []histSet{{m.sentLabel, m.sent}}
		if m.server != nil {
			sets = append(sets, histSet{m.srvLabel, ints(m.server)})
		} else if m.id == "isl" && len(p.overhead) > 0 {
			sets = append(sets, histSet{"sent: with the chat template", p.islTpl})
		}
		if len(m.sent) == 0 && len(m.server) == 0 && len(m.fit.Lengths) == 0 {
			continue
		}
		sec.Figures = append(sec.Figures, figure{ID: m.id + "-hist", Caption: "tokens a request, as each side counted them",
			SVG: template.HTML(histogramSVG(m.name+" (histogram)", "tokens", sets, 0))})
		fitSet := histSet{"client count", m.sent}
		if m.fit.Lengths != nil {
			fitSet = histSet{m.fit.Source, ints(m.fit.Lengths)}
		}
		var extra *ecdfExtra
		caption := "no target distribution configured"
		if m.fit.Target.Dist != nil && len(fitSet.Values) > 0 {
			extra = fitExtra(fitSet.Values, m.fit.Target)
			caption = fmt.Sprintf("%s against the target %s: %s (the largest gap, marked)", fitSet.Label, m.fit.Target.Dist, extra.KS.Label)
		}
		if m.fit.Verdict == nil && extra != nil {
			caption += "; not asserted (--assert-" + m.id + " tests the fit)"
		}
		if v := m.fit.Verdict; v != nil {
			first, _, _ := strings.Cut(v.Text, "\n")
			word := map[bool]string{true: "PASS ", false: "FAIL "}[v.Pass]
			if !m.fit.Asserted {
				word = "not asserted, for information: "
			}
			caption += "; " + word + first
		}
		sec.Figures = append(sec.Figures, figure{ID: m.id + "-ecdf", Caption: caption,
			SVG: template.HTML(ecdfWith(m.name+" ECDF", "tokens", []histSet{fitSet}, extra))})
		if m.id == "isl" && len(p.overhead) > 0 {
			sec.Figures = append(sec.Figures, figure{ID: "isl-template", Caption: fmt.Sprintf("%s message-content tokens + %s chat-template tokens a request on average (%s), counted by the client tokenizer",
				num(counts.Content), num(counts.Template), modes),
				SVG: template.HTML(histogramSVG("Chat-template tokens per request", "template tokens", []histSet{{"template tokens", p.overhead}}, 1))})
		}
	}
	return sec
}

func modeList(m map[string]int) string {
	if len(m) == 0 {
		return "mode not recorded"
	}
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(m[b]-m[a], cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k
		if len(keys) > 1 {
			parts[i] = fmt.Sprintf("%s %d", k, m[k])
		}
	}
	return strings.Join(parts, ", ")
}

// fitExtra returns the target's CDF over the lengths' range (widened to where the
// target has all but 0.1% of its mass each side) and the KS gap between the lengths'
// ECDF and the target's CDF, over the integers (where both step).
func fitExtra(v []float64, target distribution.Length) *ecdfExtra {
	xs := slices.Clone(v)
	slices.Sort(xs)
	lo, hi := int(xs[0]), int(xs[len(xs)-1])
	for n := 0; n < 100000 && lo > 0 && target.CDF(lo-1) > 0.001; n++ {
		lo--
	}
	for n := 0; n < 100000 && target.CDF(hi) < 0.999; n++ {
		hi++
	}
	m := ksToTarget(xs, target)
	return &ecdfExtra{Target: target.CDF, TargetLabel: "target " + fmt.Sprint(target.Dist), Lo: lo, Hi: hi, KS: &m}
}

// ksToTarget is the Kolmogorov–Smirnov gap D = max_k |F_n(k) − F(k)| of sorted
// integer lengths against target's CDF, and where it occurs. Both are step functions
// that move only at integers, so the integers from one below the smallest length to the
// largest hold the maximum.
func ksToTarget(sorted []float64, target distribution.Length) ksMark {
	n := float64(len(sorted))
	best := ksMark{X: sorted[0] - 1, Y1: 0, Y2: target.CDF(int(sorted[0]) - 1)}
	i := 0
	for k := int(sorted[0]); k <= int(sorted[len(sorted)-1]); k++ {
		for i < len(sorted) && sorted[i] <= float64(k) {
			i++
		}
		fn, f := float64(i)/n, target.CDF(k)
		if math.Abs(fn-f) > math.Abs(best.Y2-best.Y1) {
			best = ksMark{X: float64(k), Y1: fn, Y2: f}
		}
	}
	best.Label = fmt.Sprintf("D = %.4f at %g", math.Abs(best.Y2-best.Y1), best.X)
	return best
}
