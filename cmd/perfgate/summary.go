package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/reportgen"
)

// summaryUsage is --summary-md's help, shared by the commands that take it.
const summaryUsage = "[output] write a markdown summary of the answer here (the headline, each statistic's baseline, current, change, interval and verdict, validity, artifact links); also appended to $" + reportgen.EnvStepSummary + " when that is set"

// registerSummaryFlag adds --summary-md to fs.
func registerSummaryFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "summary-md", "", summaryUsage)
}

// setSummary records the markdown summary of what the command decided;
// writeSummary writes it when the command ends.
func setSummary(e *env, s reportgen.Summary) { e.summary = &s }

// gateSummary records a regression gate's summary, titled by the command that ran it,
// with the advice the console prints under its headline.
func gateSummary(e *env, res gate.GateResult, how gateCommand) {
	s := res.Summary()
	for _, l := range gateAdvice(res, how) {
		s.Lines = append(s.Lines, "to decide: "+l)
	}
	s.Title = "perfgate profile: regression gate"
	if how.regress {
		s.Title = "perfgate regress"
	}
	if cur := res.Current; cur != nil {
		if sc, err := perfrun.SeriesScenario(cur); err == nil && sc.Name != "" {
			s.Title += ": " + sc.Name
		}
	}
	setSummary(e, s)
}

// writeSummary writes the command's summary, if it recorded one, to file (when given)
// and appends it to $GITHUB_STEP_SUMMARY (when set), and returns err, the command's
// own error. A summary that cannot be written is one line on stderr; when the command
// itself succeeded, a --summary-md FILE that cannot be written is a runtime error
// (exit 1), while $GITHUB_STEP_SUMMARY only warns: the CI's summary page is not the
// result.
func writeSummary(e *env, file string, err error) error {
	if e.summary == nil {
		return err
	}
	s := *e.summary
	if file != "" {
		if werr := reportgen.WriteSummaryFile(file, s); werr != nil {
			werr = fmt.Errorf("--summary-md %s: %s", file, strings.TrimPrefix(werr.Error(), "reportgen: "))
			if err != nil {
				fmt.Fprintf(e.stderr, "perfgate: %v\n", werr)
			} else {
				err = runtimef("%v", werr)
			}
		}
	}
	if _, serr := reportgen.AppendStepSummary(s); serr != nil {
		fmt.Fprintf(e.stderr, "perfgate: warning: %v\n", serr)
	}
	return err
}

// historyTrends are the sparklines of scenario's series in the history at addr, one per
// primary statistic, newest result last, for a summary ("" addr: none). A history that
// cannot be read adds nothing: the summary is not the result.
func historyTrends(ctx context.Context, addr, scenario string) []reportgen.SummaryTrend {
	if addr == "" {
		return nil
	}
	s, err := history.Open(ctx, addr)
	if err != nil {
		return nil
	}
	defer s.Close()
	trends, err := history.Analyze(ctx, s, history.Query{Scenario: scenario, Last: reportgen.SparklineMax}, history.Detection{}, history.PrimaryStats())
	if err != nil {
		return nil
	}
	return summaryTrends(trends)
}

// summaryTrends draws each trend: its series and metric, its values, and the newest
// value with the number of results.
func summaryTrends(trends []*history.Trend) []reportgen.SummaryTrend {
	var out []reportgen.SummaryTrend
	for _, tr := range trends {
		if len(tr.Values) == 0 {
			continue
		}
		note := fmt.Sprintf("newest %s of %d results", reportgen.FormatNumber(tr.Values[len(tr.Values)-1]), len(tr.Values))
		if n := len(tr.ChangePoints); n > 0 {
			note += fmt.Sprintf(", %d change %s", n, plural(n, "point", "points"))
		}
		out = append(out, reportgen.SummaryTrend{Name: tr.Series.Scenario + " " + tr.Metric, Values: tr.Values, Note: note})
	}
	return out
}
