package reportgen

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// SummaryLimit is the size a markdown summary stays under, in bytes: GitHub's limit
// for one step's job summary ($GITHUB_STEP_SUMMARY), 1 MiB.
const SummaryLimit = 1 << 20

// SummaryFile is the markdown summary a Go test's regression gate writes beside its
// gate report (perftest's gate assertions; the CLI writes one where --summary-md says).
const SummaryFile = "summary.md"

// EnvStepSummary names the file a GitHub Actions step appends its job summary to.
// perfgate appends its markdown summary there whenever the variable is set.
const EnvStepSummary = "GITHUB_STEP_SUMMARY"

// summaryLinks is the most artifact links a summary lists (and they take at most a
// quarter of its limit).
const summaryLinks = 50

// summaryCell is the most a table cell or a line of a summary holds, in bytes: one
// long verdict or path cannot take the page.
const summaryCell = 2000

// Summary is what [WriteSummary] writes: a result as markdown for a pull request or a
// CI job's summary page. Its fields hold text as the console prints it (the caller
// formats numbers in their units); the renderer escapes it and keeps the page under
// the limit.
type Summary struct {
	// Title names what ran: "perfgate profile: chat-burst".
	Title string
	// Mark is the answer as the console marks it: PASS, FAIL, INCONCLUSIVE or INVALID.
	Mark string
	// Headline is the one-sentence answer, the console's (a gate's
	// gate.GateResult.Headline, a run's check.Answer).
	Headline string
	// Lines go under the headline: where each side ran, what would decide.
	Lines []string
	// Stats is the table of statistics: one row each.
	Stats []SummaryStat
	// Verdicts are the checks' verdicts (assertions, objectives), one line each.
	Verdicts []SummaryLine
	// Validity are the validity checks' lines: whether the numbers can be trusted.
	Validity []SummaryLine
	// Trends are sparklines of a history's series, oldest result first.
	Trends []SummaryTrend
	// Artifacts are links to the files the run wrote; [Summary.Relative] makes their
	// paths relative to where the summary is read.
	Artifacts []SummaryLink
	// Limit is the most bytes the summary may take (0 = SummaryLimit).
	Limit int
}

// SummaryStat is one statistic's row: baseline, current, change, interval and verdict,
// each as printed ("" = none).
type SummaryStat struct {
	Name, Baseline, Current, Change, Interval, Verdict string
	// Gating is set for a statistic that can fail the gate; the others are marked
	// "reported only".
	Gating bool
}

// SummaryLine is one verdict: its mark (PASS, FAIL, WARN, INVALID, …) and its first
// line.
type SummaryLine struct{ Mark, Text string }

// SummaryTrend is one series over a history: its name, its values oldest first, and a
// note (the newest value, a change point).
type SummaryTrend struct {
	Name   string
	Values []float64
	Note   string
}

// SummaryLink is a link to an artifact.
type SummaryLink struct{ Label, Path string }

// sparkBars are the eight heights of a sparkline, lowest first.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// SparklineMax is the most points a summary's sparkline draws: the newest ones.
const SparklineMax = 60

// Sparkline draws values as a line of unicode bars, one per value: the smallest ▁, the
// largest █, the rest scaled linearly between (bar = round(7·(v-min)/(max-min))). A
// constant series is all ▄; NaN and ±Inf are a space.
func Sparkline(values []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	var b strings.Builder
	for _, v := range values {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			b.WriteByte(' ')
		case hi == lo:
			b.WriteRune(sparkBars[3])
		default:
			b.WriteRune(sparkBars[int(math.Round(7*(v-lo)/(hi-lo)))])
		}
	}
	return b.String()
}

// Relative returns s with each artifact's path made relative to dir (the directory
// the summary is read from), with forward slashes, as markdown links want; a path
// that cannot be made relative stays as it is.
func (s Summary) Relative(dir string) Summary {
	s.Artifacts = append([]SummaryLink(nil), s.Artifacts...)
	for i, a := range s.Artifacts {
		p, err := filepath.Abs(a.Path)
		if err != nil {
			continue
		}
		if d, err := filepath.Abs(dir); err == nil {
			if r, err := filepath.Rel(d, p); err == nil {
				p = r
			}
		}
		s.Artifacts[i].Path = filepath.ToSlash(p)
	}
	return s
}

// WriteSummary writes s as GitHub-flavoured markdown: the title and the marked
// headline, the lines under it, the validity lines, the statistics' table (statistic,
// baseline, current, change, interval, verdict), the verdicts, the trends' sparklines
// and the artifacts' links. Text is escaped (no HTML, no table breaks), each cell is
// cut to 2,000 bytes, and the whole stays under s.Limit (SummaryLimit): rows that do
// not fit are left out, and a note says how many and where the rest is.
func WriteSummary(w io.Writer, s Summary) error {
	_, err := io.WriteString(w, s.markdown())
	return err
}

// markdown renders s within its limit.
func (s Summary) markdown() string {
	limit := s.Limit
	if limit <= 0 {
		limit = SummaryLimit
	}
	var tail strings.Builder // the links and the note, kept whatever is left out
	if len(s.Artifacts) > 0 {
		tail.WriteString("\n**Artifacts:** ")
		for i, a := range s.Artifacts[:min(len(s.Artifacts), summaryLinks)] {
			link := fmt.Sprintf("[%s](%s)", mdText(clip(a.Label)), linkPath(clip(a.Path)))
			if i > 0 && tail.Len()+len(link) > limit/4 { // the links take at most a quarter
				break
			}
			if i > 0 {
				tail.WriteString(" · ")
			}
			tail.WriteString(link)
		}
		tail.WriteString("\n")
	}
	const note = "\n> %d more %s left out to keep this summary under GitHub's 1 MiB limit; the artifacts hold every one.\n"
	reserve := tail.Len() + len(note) + 64
	var b strings.Builder
	title := clip(s.Title)
	if title == "" {
		title = "perfgate"
	}
	fmt.Fprintf(&b, "### %s\n\n", mdText(title))
	head := mdText(clip(s.Headline))
	switch {
	case s.Mark != "" && strings.HasPrefix(s.Headline, s.Mark):
		// The console's line starts with its mark already ("FAIL: 1 of 2 assertion(s)").
		head = "**" + mdText(s.Mark) + "**" + mdText(clip(s.Headline[len(s.Mark):]))
	case s.Mark != "":
		head = "**" + mdText(s.Mark) + "** " + head
	}
	b.WriteString(head + "\n")
	left := 0 // items left out
	add := func(text string) bool {
		if left > 0 || b.Len()+len(text)+reserve > limit {
			left++
			return false
		}
		b.WriteString(text)
		return true
	}
	// each adds n items rendered by item, counting those left out without rendering
	// them (a huge run's rows cost nothing once the page is full).
	each := func(n int, item func(i int) string) {
		for i := range n {
			if left > 0 {
				left += n - i
				return
			}
			add(item(i))
		}
	}
	if len(s.Lines) > 0 {
		b.WriteString("\n")
	}
	each(len(s.Lines), func(i int) string { return "- " + mdText(clip(s.Lines[i])) + "\n" })
	section := func(heading string, ls []SummaryLine) {
		if len(ls) == 0 {
			return
		}
		if !add("\n**" + heading + "**\n\n") {
			left += len(ls) - 1
			return
		}
		each(len(ls), func(i int) string {
			return fmt.Sprintf("- **%s** %s\n", mdText(ls[i].Mark), mdText(clip(firstOf(ls[i].Text))))
		})
	}
	// Validity first: whether the numbers can be trusted is read before the numbers,
	// and kept when the rest is cut.
	section("Validity", s.Validity)
	if len(s.Stats) > 0 && add("\n| statistic | baseline | current | change | interval | verdict |\n|---|--:|--:|--:|:-:|---|\n") {
		each(len(s.Stats), func(i int) string {
			r := s.Stats[i]
			v := r.Verdict
			if !r.Gating {
				v = strings.TrimSpace(v + " (reported only)")
			}
			return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", cell(r.Name), cell(r.Baseline), cell(r.Current), cell(r.Change), cell(r.Interval), cell(v))
		})
	} else if len(s.Stats) > 0 {
		left += len(s.Stats) - 1
	}
	section("Verdicts", s.Verdicts)
	if len(s.Trends) > 0 && add("\n**History** (oldest result first)\n\n") {
		each(len(s.Trends), func(i int) string {
			t := s.Trends[i]
			v := t.Values
			if len(v) > SparklineMax {
				v = v[len(v)-SparklineMax:]
			}
			return strings.TrimRight(fmt.Sprintf("- %s `%s` %s", mdText(clip(t.Name)), Sparkline(v), mdText(clip(t.Note))), " ") + "\n"
		})
	} else if len(s.Trends) > 0 {
		left += len(s.Trends) - 1
	}
	b.WriteString(tail.String())
	if left > 0 {
		fmt.Fprintf(&b, note, left, plural(left, "line", "lines"))
	}
	if b.Len() > limit { // a limit smaller than the title and links: cut, whole runes
		n := limit - len("…\n")
		text := b.String()
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		return text[:max(n, 0)] + "…\n"
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// firstOf is the first line of text.
func firstOf(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return first
}

// clip keeps text to summaryCell bytes, on a rune boundary, marking a cut with "…".
func clip(text string) string {
	if len(text) <= summaryCell {
		return text
	}
	n := summaryCell - len("…")
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "…"
}

// mdEscaper escapes what markdown or the HTML GitHub allows in it would read as
// markup: a result's text (a scenario name, an error) renders as text.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	"\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]", "|", "\\|", "#", "\\#",
	"\r\n", " ", "\n", " ", "\r", " ",
)

// mdText escapes text for a markdown line.
func mdText(text string) string { return mdEscaper.Replace(text) }

// cell escapes text for a table cell ("" shows as "–").
func cell(text string) string {
	if text == "" {
		return "–"
	}
	return mdText(clip(text))
}

// linkPath escapes a link target: spaces and parentheses would end it.
func linkPath(p string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(p)
}

// WriteSummaryFile writes s to path (atomically), its artifact links relative to
// path's directory.
func WriteSummaryFile(path string, s Summary) error {
	s = s.Relative(filepath.Dir(path))
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteSummary(w, s) })
}

// AppendStepSummary appends s to the file $GITHUB_STEP_SUMMARY names, as GitHub
// Actions expects (a step's summary is what it appends), with the artifact links
// relative to the working directory (where the job's checkout and artifacts are), and
// within what is left of the step's 1 MiB. It returns the file's path ("" when the
// variable is unset: nothing is written).
func AppendStepSummary(s Summary) (string, error) {
	path := os.Getenv(EnvStepSummary)
	if path == "" {
		return "", nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return path, fmt.Errorf("reportgen: $%s: %w", EnvStepSummary, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return path, fmt.Errorf("reportgen: $%s: %w", EnvStepSummary, err)
	}
	left := SummaryLimit - int(st.Size())
	if s.Limit > 0 {
		left = min(left, s.Limit)
	}
	if left < 1024 {
		return path, fmt.Errorf("reportgen: $%s %s holds %d bytes already: no room under GitHub's 1 MiB for perfgate's summary", EnvStepSummary, path, st.Size())
	}
	wd, _ := os.Getwd()
	s = s.Relative(wd)
	s.Limit = left
	text := s.markdown()
	if st.Size() > 0 {
		text = "\n" + text
		if len(text) > left {
			text = text[1:]
		}
	}
	if _, err := io.WriteString(f, text); err != nil {
		return path, fmt.Errorf("reportgen: $%s: %w", EnvStepSummary, err)
	}
	if err := f.Close(); err != nil {
		return path, fmt.Errorf("reportgen: $%s: %w", EnvStepSummary, err)
	}
	return path, nil
}
