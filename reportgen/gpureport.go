package reportgen

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// The run report's "GPU telemetry" section, for a run with --gpu-telemetry: what each
// GPU used over the measured window (gpu_telemetry.json) and the run's GPU metrics
// (metrics.json's), the efficiencies first.

// gpuMetricNames are the run-level GPU metrics the section lists, in its order: the
// efficiencies a gate compares, then the totals they come from.
var gpuMetricNames = []string{
	record.MetricTokensPerJoule, record.MetricOutputTPSPerGPU, record.MetricEnergyPerRequest,
	record.MetricGPUEnergy, record.MetricGPUPower, record.MetricGPUUtilization, record.MetricGPUMemoryUsed,
}

// gpuRow is one GPU's line of the section's table.
type gpuRow struct {
	GPU, Where                                            string
	Samples                                               int
	Energy, From, PowerMean, PowerMax, Util, Mem, MemPeak string
	MemTotal                                              string
}

// gpuPage is the section's data.
type gpuPage struct {
	Note     string
	Metrics  []kv
	GPUs     []gpuRow
	Warnings []string
}

// gpuSection returns the section for s (nil = the run has no GPU telemetry), with the
// GPU metrics of m.
func gpuSection(s *servermetrics.GPUSummary, m record.Metrics) *gpuPage {
	if s == nil {
		return nil
	}
	p := &gpuPage{Warnings: s.Warnings,
		Note: fmt.Sprintf("%d GPU(s) over the measured window (%s s), %d scrape(s), %d failed: energy, power, utilisation and memory as DCGM reported them.",
			len(s.GPUs), num(s.Seconds), s.Scrapes, s.Failures)}
	for _, n := range gpuMetricNames {
		if v, ok := m.Scalars[n]; ok {
			text := num(v.Value)
			if v.Unit == "ratio" {
				text = num(100*v.Value) + " %"
			}
			p.Metrics = append(p.Metrics, kv{label(info(n).Header, unitLabel(v.Unit)), text})
		}
	}
	opt := func(v *float64, scale float64) string {
		if v == nil {
			return "–"
		}
		return num(*v * scale)
	}
	for _, g := range s.GPUs {
		name := g.ID
		if g.Model != "" {
			name += " " + g.Model
		}
		var where []string
		for _, w := range []string{g.Host, g.UUID, g.URL} {
			if w != "" {
				where = append(where, w)
			}
		}
		p.GPUs = append(p.GPUs, gpuRow{GPU: name, Where: strings.Join(where, " · "), Samples: g.Samples,
			Energy: num(g.EnergyJ), From: g.EnergyFrom, PowerMean: num(g.PowerMeanW), PowerMax: num(g.PowerMaxW),
			Util: opt(g.UtilMean, 100), Mem: opt(g.MemUsedMeanMiB, 1), MemPeak: opt(g.MemUsedMaxMiB, 1), MemTotal: opt(g.MemTotalMiB, 1)})
	}
	return p
}

// unitLabel is a unit as a row label shows it: a ratio is shown as a percentage.
func unitLabel(unit string) string {
	if unit == "ratio" {
		return "%"
	}
	return unit
}

// gpuTmpl is the section's markup, a "gpu" template of the run page.
const gpuTmpl = `{{define "gpu"}}<h2>GPU telemetry</h2>
<div id="gpu-telemetry"><p class="sub">{{.Note}}</p>
{{if .Metrics}}<table id="gpu-metrics"><tbody>{{range .Metrics}}<tr><th class="l">{{.K}}</th><td>{{.V}}</td></tr>{{end}}</tbody></table>{{end}}
<table id="gpus"><thead><tr><th class="l">GPU</th><th class="l">host · UUID · endpoint</th><th>samples</th><th>energy (J)</th><th class="l">from</th><th>mean power (W)</th><th>max power (W)</th><th>utilisation (%)</th><th>memory used, mean (MiB)</th><th>peak (MiB)</th><th>total (MiB)</th></tr></thead><tbody>
{{range .GPUs}}<tr><td class="l">{{.GPU}}</td><td class="l"><code>{{.Where}}</code></td><td>{{.Samples}}</td><td>{{.Energy}}</td><td class="l">{{.From}}</td><td>{{.PowerMean}}</td><td>{{.PowerMax}}</td><td>{{.Util}}</td><td>{{.Mem}}</td><td>{{.MemPeak}}</td><td>{{.MemTotal}}</td></tr>
{{end}}</tbody></table>
{{if .Warnings}}<ul class="warn">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}</div>
{{end}}`
