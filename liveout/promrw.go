package liveout

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/exp/api/remote"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Remote-write 1.0's message, prometheus.WriteRequest, as Prometheus's
// prompb/remote.proto and prompb/types.proto define it (the fields a sample stream
// uses: a series' labels and samples). client_golang's remote API encodes and sends
// any protobuf message, but ships only the 2.0 types; the 1.0 ones live in the
// prometheus/prometheus module, whose dependency graph (and a prometheus/common that
// imports "testing") this module keeps out. So the message is declared here, field
// numbers as in prompb, and encoded by the protobuf library.
//
// wrDescs are the descriptors of those messages.
type wrDescs struct {
	req, series, label, sample protoreflect.MessageDescriptor
}

var wr = newWRDescs()

func newWRDescs() wrDescs {
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, msg string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
		if msg != "" {
			f.TypeName = proto.String(".prometheus." + msg)
		}
		return f
	}
	const (
		rep = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		tm  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		ts  = descriptorpb.FieldDescriptorProto_TYPE_STRING
		td  = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
		ti  = descriptorpb.FieldDescriptorProto_TYPE_INT64
	)
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("perfgate/liveout/prompb.proto"), Package: proto.String("prometheus"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("WriteRequest"), Field: []*descriptorpb.FieldDescriptorProto{field("timeseries", 1, tm, rep, "TimeSeries")}},
			{Name: proto.String("TimeSeries"), Field: []*descriptorpb.FieldDescriptorProto{field("labels", 1, tm, rep, "Label"), field("samples", 2, tm, rep, "Sample")}},
			{Name: proto.String("Label"), Field: []*descriptorpb.FieldDescriptorProto{field("name", 1, ts, opt, ""), field("value", 2, ts, opt, "")}},
			{Name: proto.String("Sample"), Field: []*descriptorpb.FieldDescriptorProto{field("value", 1, td, opt, ""), field("timestamp", 2, ti, opt, "")}},
		},
	}
	f, err := protodesc.NewFile(fd, nil)
	if err != nil {
		panic("liveout: remote-write descriptor: " + err.Error())
	}
	ms := f.Messages()
	return wrDescs{req: ms.ByName("WriteRequest"), series: ms.ByName("TimeSeries"), label: ms.ByName("Label"), sample: ms.ByName("Sample")}
}

// promRW pushes snapshots as remote-write 1.0 requests.
type promRW struct {
	api    *remote.API
	labels Labels
}

func newPromRW(raw string, client *http.Client, labels Labels) (*promRW, error) {
	u, err := stripUser(raw)
	if err != nil {
		return nil, err
	}
	path := u.Path
	u.Path, u.RawPath = "", ""
	api, err := remote.NewAPI(u.String(), remote.WithAPIHTTPClient(client), remote.WithAPIPath(path),
		// Each push is bounded by the interval; a retry after that would carry stale
		// counters the next push replaces.
		remote.WithAPIBackoff(remote.BackoffConfig{Min: 50 * time.Millisecond, Max: 500 * time.Millisecond, MaxRetries: 2}),
		remote.WithAPINoRetryOnRateLimit())
	if err != nil {
		return nil, err
	}
	return &promRW{api: api, labels: labels}, nil
}

func (p *promRW) push(ctx context.Context, s *snapshot) error {
	_, err := p.api.Write(ctx, remote.WriteV1MessageType, p.request(s))
	return err
}

func (p *promRW) close(context.Context) error { return nil }

// request builds s's WriteRequest: every series at s's time.
func (p *promRW) request(s *snapshot) proto.Message {
	req := dynamicpb.NewMessage(wr.req)
	list := req.Mutable(wr.req.Fields().ByName("timeseries")).List()
	ms := s.at.UnixMilli()
	add := func(name string, v float64, labels ...string) {
		ts := dynamicpb.NewMessage(wr.series)
		pairs := append([]string{"__name__", name, "job", "perfgate", "scenario", p.labels.Scenario, "run", p.labels.Run}, labels...)
		type kv struct{ k, v string }
		var kvs []kv
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i+1] != "" { // an empty label is no label
				kvs = append(kvs, kv{pairs[i], pairs[i+1]})
			}
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) }) // remote-write wants them sorted
		ll := ts.Mutable(wr.series.Fields().ByName("labels")).List()
		for _, x := range kvs {
			l := dynamicpb.NewMessage(wr.label)
			l.Set(wr.label.Fields().ByName("name"), protoreflect.ValueOfString(x.k))
			l.Set(wr.label.Fields().ByName("value"), protoreflect.ValueOfString(x.v))
			ll.Append(protoreflect.ValueOfMessage(l))
		}
		sm := dynamicpb.NewMessage(wr.sample)
		sm.Set(wr.sample.Fields().ByName("value"), protoreflect.ValueOfFloat64(v))
		sm.Set(wr.sample.Fields().ByName("timestamp"), protoreflect.ValueOfInt64(ms))
		ts.Mutable(wr.series.Fields().ByName("samples")).List().Append(protoreflect.ValueOfMessage(sm))
		list.Append(protoreflect.ValueOfMessage(ts))
	}
	hist := func(name string, h hist, labels ...string) {
		var cum uint64
		for i, b := range Bounds {
			cum += h.counts[i]
			add(name+"_bucket", float64(cum), append(slices.Clone(labels), "le", strconv.FormatFloat(b, 'g', -1, 64))...)
		}
		add(name+"_bucket", float64(h.count), append(slices.Clone(labels), "le", "+Inf")...)
		add(name+"_sum", h.sum, labels...)
		add(name+"_count", float64(h.count), labels...)
	}
	for _, se := range s.series {
		ls := se.labels()
		add(SeriesRequests.Prom, float64(se.ok), append(slices.Clone(ls), "outcome", "ok")...)
		add(SeriesRequests.Prom, float64(se.errors), append(slices.Clone(ls), "outcome", "error")...)
		add(SeriesInputTokens.Prom, float64(se.inTokens), ls...)
		add(SeriesOutputTokens.Prom, float64(se.outTokens), ls...)
		hist(SeriesTTFT.Prom, se.ttft, ls...)
		hist(SeriesITL.Prom, se.itl, ls...)
		hist(SeriesLatency.Prom, se.latency, ls...)
	}
	add(SeriesRequestRate.Prom, s.reqRate)
	add(SeriesOutputRate.Prom, s.outRate)
	add(SeriesWarmup.Prom, float64(s.warmup))
	add(SeriesDropped.Prom, float64(s.dropped))
	return req
}
