package reportgen_test

import (
	"fmt"
	"os"

	"github.com/perfgate/perfgate/reportgen"
)

func ExampleWriteSummary() {
	s := reportgen.Summary{
		Title:    "perfgate regress: chat",
		Mark:     "PASS",
		Headline: "regression gate: no regression on 4 gating statistics (baseline 10 runs in 10 sessions, current 5 runs in 1 session)",
		Stats: []reportgen.SummaryStat{
			{Name: "TTFT p50", Baseline: "20.1ms", Current: "20.3ms", Change: "+1.0%", Interval: "[-1.2%, +3.1%]", Verdict: "no regression", Gating: true},
		},
		Trends:    []reportgen.SummaryTrend{{Name: "chat ttft_p50", Values: []float64{20.0, 20.4, 20.1, 20.3}}},
		Artifacts: []reportgen.SummaryLink{{Label: "gate report", Path: "cur/gate_report.html"}},
	}
	_ = reportgen.WriteSummary(os.Stdout, s)
	fmt.Println(reportgen.Sparkline([]float64{3, 1, 4, 1, 5, 9, 2, 6}))
	// Output:
	// ### perfgate regress: chat
	//
	// **PASS** regression gate: no regression on 4 gating statistics (baseline 10 runs in 10 sessions, current 5 runs in 1 session)
	//
	// | statistic | baseline | current | change | interval | verdict |
	// |---|--:|--:|--:|:-:|---|
	// | TTFT p50 | 20.1ms | 20.3ms | +1.0% | \[-1.2%, +3.1%\] | no regression |
	//
	// **History** (oldest result first)
	//
	// - chat ttft\_p50 `▁█▃▆`
	//
	// **Artifacts:** [gate report](cur/gate_report.html)
	// ▃▁▄▁▅█▂▅
}
