package reportgen

// The run report's "Jobs and turns" section (docs/agents.md, docs/reports.md): an
// agent run's job metrics (job latency, the job's first token, jobs per hour,
// sub-agent fan-out, tool wait share) and the TTFT as a function of the turn index,
// drawn from the run's metrics alone (metrics.json's job scalars and ttft_by_turn).

import (
	"fmt"
	"html/template"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// jobsPage is the section as the template shows it.
type jobsPage struct {
	Note    string
	Rows    []kv // the job metrics the run has, in catalogue order
	Figures []figure
	Turns   []jobTurnRow
}

type jobTurnRow struct{ Turn, Count, P50, P99 string }

// jobsSection builds the section from m, nil when m has neither job metrics nor TTFT
// by turn (a run of single-turn requests).
func jobsSection(m record.Metrics) *jobsPage {
	p := &jobsPage{}
	for _, n := range metric.JobMetricNames {
		if s, ok := m.Scalars[n]; ok {
			p.Rows = append(p.Rows, kv{label(info(n).Header, s.Unit), num(s.Value)})
		}
	}
	if len(p.Rows) == 0 && len(m.TTFTByTurn) == 0 {
		return nil
	}
	if len(p.Rows) == 0 {
		p.Note = "Multi-turn conversations: no agent jobs, so no job metrics."
	} else {
		p.Note = "A job runs from its first request's scheduled time to its last answer's end; the tool wait share is the time its turns waited for tools over its latency."
	}
	if len(m.TTFTByTurn) == 0 {
		return p
	}
	var x, p50, p99 []float64
	for _, e := range m.TTFTByTurn {
		x, p50, p99 = append(x, float64(e.Turn)), append(p50, e.P50), append(p99, e.P99)
		turn := fmt.Sprint(e.Turn)
		if e.AndLater {
			turn += " and later"
		}
		p.Turns = append(p.Turns, jobTurnRow{Turn: turn, Count: fmt.Sprint(e.Count), P50: num(e.P50), P99: num(e.P99)})
	}
	p.Figures = []figure{{ID: "ttft-by-turn", Caption: "time to first token of the requests at each turn index of their session (the last point pools the later turns when it says so)",
		SVG: template.HTML(lineSVG("TTFT by turn", "turn index (from 0)", "ms", []series{{"p50", x, p50}, {"p99", x, p99}}))}}
	return p
}
