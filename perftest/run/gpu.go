package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/servermetrics"
)

// gpuRun is GPU telemetry's scraping during one run (Scenario.GPUTelemetry).
type gpuRun struct {
	scraper *servermetrics.Scraper // nil once stopped
	acc     *servermetrics.GPUAccumulator
	f       *os.File
}

// startGPU starts scraping sc.GPUTelemetry (paths resolved against base, the server
// under test) into dir's gpu_telemetry.jsonl ("" = no file). The scrape before the
// run tells whether each endpoint serves DCGM's names: one that answers without them
// is invalid configuration (the run would measure no energy), one that does not
// answer is a warning. The scrapes outlive a cancelled run, as the server metrics'.
func startGPU(ctx context.Context, sc scenario.Scenario, base, dir string) (*gpuRun, []string, error) {
	g := &gpuRun{acc: servermetrics.NewGPUAccumulator()}
	var w io.Writer
	if dir != "" {
		f, err := os.Create(filepath.Join(dir, servermetrics.GPUFile))
		if err != nil {
			return nil, nil, fmt.Errorf("artifacts: %w", err)
		}
		g.f, w = f, f
	}
	s, err := servermetrics.StartObserved(context.WithoutCancel(ctx), sc.GPUTelemetry.Resolve(base), w, g.acc.Add)
	if err != nil {
		g.close()
		return nil, nil, fmt.Errorf("%w: gpu_telemetry: %w", scenario.ErrInvalidScenario, err)
	}
	g.scraper = s
	warnings, err := g.acc.Check()
	if err != nil {
		g.close()
		return nil, nil, fmt.Errorf("%w: %w", scenario.ErrInvalidScenario, err)
	}
	return g, warnings, nil
}

// stop ends the scrapes (one more after the run) and closes the file; it returns the
// file's path ("" = none) and the first write error.
func (g *gpuRun) stop() (string, error) {
	var err error
	if g.scraper != nil {
		_, err = g.scraper.Stop()
		g.scraper = nil
	}
	name := ""
	if g.f != nil {
		name = g.f.Name()
		if cerr := g.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("servermetrics: %w", cerr)
		}
		g.f = nil
	}
	return name, err
}

// close stops what stop has not (an early return).
func (g *gpuRun) close() {
	if g.scraper != nil {
		_, _ = g.scraper.Stop()
		g.scraper = nil
	}
	if g.f != nil {
		_ = g.f.Close()
		g.f = nil
	}
}

// measuredWindow is the run's measured window on the wall clock (first measured
// request sent → last one done), from the streaming pass or the records in memory;
// the zero Window when unknown.
func (o *Outcome) measuredWindow() servermetrics.Window {
	if o.sum != nil {
		return o.sum.window
	}
	a := metric.NewAccumulator(metric.Options{})
	a.TotalsOnly()
	for i := range o.Client {
		a.Add(&o.Client[i])
	}
	start, end, _ := a.Window()
	return servermetrics.Window{Start: start, End: end}
}

// summarizeGPU summarises the GPU telemetry over the measured window into o.GPU and
// adds its warnings; [Outcome.completeSaved] adds the GPU metrics from it.
func (o *Outcome) summarizeGPU(acc *servermetrics.GPUAccumulator) {
	s := acc.Summary(o.measuredWindow())
	o.GPU = &s
	o.Warnings = append(o.Warnings, s.Warnings...)
}

// addGPUMetrics adds o.GPU's metrics (metric.CompleteGPU) to o.Metrics; through
// [Outcome.completeSaved] only.
func (o *Outcome) addGPUMetrics() {
	s := o.GPU
	if s == nil || len(s.GPUs) == 0 {
		return
	}
	metric.CompleteGPU(&o.Metrics, metric.GPU{Count: len(s.GPUs), EnergyJ: s.EnergyJ, PowerW: s.PowerMeanW, Util: s.UtilMean, MemMiB: s.MemUsedMaxMiB})
}

// loadGPU reads dir's gpu_telemetry.jsonl, when there is one, into o.GPU.
func (o *Outcome) loadGPU(dir string) error {
	f, err := os.Open(filepath.Join(dir, servermetrics.GPUFile))
	if err != nil {
		return nil // no GPU telemetry
	}
	defer f.Close()
	acc := servermetrics.NewGPUAccumulator()
	if err := servermetrics.ReadScrapes(f, acc.Add); err != nil {
		return fmt.Errorf("scenario: load %s: %w", servermetrics.GPUFile, err)
	}
	o.Files = append(o.Files, f.Name())
	w := o.Warnings
	o.summarizeGPU(acc)
	o.Warnings = w // a run read back repeats no warning
	return nil
}
