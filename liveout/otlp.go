package liveout

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// otlp pushes snapshots through the OpenTelemetry SDK's OTLP/HTTP metric exporter, as
// cumulative sums, gauges and explicit-bucket histograms.
type otlp struct {
	exp    *otlpmetrichttp.Exporter
	res    *resource.Resource
	labels Labels
}

func newOTLP(raw string, client *http.Client, labels Labels) (*otlp, error) {
	u, err := stripUser(raw)
	if err != nil {
		return nil, err
	}
	u.RawQuery = "" // transport adds it back
	exp, err := otlpmetrichttp.New(context.Background(),
		otlpmetrichttp.WithEndpointURL(u.String()),
		otlpmetrichttp.WithHTTPClient(client),
		// Each push is bounded by the interval; the next one carries the counters.
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(attribute.String("service.name", "perfgate"))
	return &otlp{exp: exp, res: res, labels: labels}, nil
}

func (o *otlp) push(ctx context.Context, s *snapshot) error {
	return o.exp.Export(ctx, o.data(s))
}

func (o *otlp) close(ctx context.Context) error { return o.exp.Shutdown(ctx) }

// data is s as the SDK's metric data: cumulative since the run started.
func (o *otlp) data(s *snapshot) *metricdata.ResourceMetrics {
	run := []attribute.KeyValue{attribute.String("scenario", o.labels.Scenario), attribute.String("run", o.labels.Run)}
	attrs := func(se *series, extra ...attribute.KeyValue) attribute.Set {
		kv := append([]attribute.KeyValue{}, run...)
		for ls := se.labels(); len(ls) >= 2; ls = ls[2:] {
			kv = append(kv, attribute.String(ls[0], ls[1]))
		}
		return attribute.NewSet(append(kv, extra...)...)
	}
	sum := func(def Series, pts []metricdata.DataPoint[int64]) metricdata.Metrics {
		return metricdata.Metrics{Name: def.OTel, Description: def.Help, Unit: def.Unit,
			Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: pts}}
	}
	pt := func(set attribute.Set, v uint64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: set, StartTime: s.start, Time: s.at, Value: int64(v)}
	}
	var reqs, in, out []metricdata.DataPoint[int64]
	hists := map[string][]metricdata.HistogramDataPoint[float64]{}
	for i := range s.series {
		se := &s.series[i]
		reqs = append(reqs, pt(attrs(se, attribute.String("outcome", "ok")), se.ok), pt(attrs(se, attribute.String("outcome", "error")), se.errors))
		in = append(in, pt(attrs(se), se.inTokens))
		out = append(out, pt(attrs(se), se.outTokens))
		for _, h := range []struct {
			def Series
			h   hist
		}{{SeriesTTFT, se.ttft}, {SeriesITL, se.itl}, {SeriesLatency, se.latency}} {
			hists[h.def.OTel] = append(hists[h.def.OTel], metricdata.HistogramDataPoint[float64]{
				Attributes: attrs(se), StartTime: s.start, Time: s.at,
				Count: h.h.count, Sum: h.h.sum, Bounds: Bounds, BucketCounts: h.h.counts,
			})
		}
	}
	runSet := attribute.NewSet(run...)
	gauge := func(def Series, v float64) metricdata.Metrics {
		return metricdata.Metrics{Name: def.OTel, Description: def.Help, Unit: def.Unit,
			Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: runSet, Time: s.at, Value: v}}}}
	}
	ms := []metricdata.Metrics{sum(SeriesRequests, reqs), sum(SeriesInputTokens, in), sum(SeriesOutputTokens, out)}
	for _, def := range []Series{SeriesTTFT, SeriesITL, SeriesLatency} {
		ms = append(ms, metricdata.Metrics{Name: def.OTel, Description: def.Help, Unit: def.Unit,
			Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: hists[def.OTel]}})
	}
	ms = append(ms, gauge(SeriesRequestRate, s.reqRate), gauge(SeriesOutputRate, s.outRate),
		sum(SeriesWarmup, []metricdata.DataPoint[int64]{pt(runSet, s.warmup)}),
		sum(SeriesDropped, []metricdata.DataPoint[int64]{pt(runSet, s.dropped)}))
	return &metricdata.ResourceMetrics{Resource: o.res, ScopeMetrics: []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: "github.com/perfgate/perfgate/liveout"}, Metrics: ms,
	}}}
}
