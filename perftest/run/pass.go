package run

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/servermetrics"
)

// summary is what one streaming pass over a run's recordings keeps: the exact metrics
// and everything the verdicts, the run context and the length checks need, in 84
// bytes a measured request (its values in the accumulator's metric.Store, 64 bytes
// plus 8 per raw metric whose values differ between requests, and compactReq's 20; error texts and ids other than the load
// generator's "req-<index>" on the side) and 24 bytes a server record. The records themselves
// stay on disk ([Outcome.Records] reads them back).
type summary struct {
	metrics  record.Metrics
	opt      metric.Options
	reqs     []compactReq     // measured (non-warmup) requests, in recording order
	vals     *metric.Store    // their metric values, in the same order: the accumulator's
	ids      map[int32]string // position in reqs → request id, when not "req-<index>"
	errs     map[int32]string // position in reqs → "kind: text" of a failed request
	requests int              // measured requests
	failed   int
	warm     map[string]bool // warm-up request ids → whether the request succeeded
	nWarm    int
	overhead bool           // a measured request recorded its chat-template overhead
	tplModes map[string]int // measured requests with a known overhead, by tokenization mode

	server bool           // a server recording was read
	srv    []compactSrv   // server records, sorted by Seq
	shared bool           // every successful client request has a server record with its id
	islAny []int32        // per reqs position: the server's ISL under its id (not rejected), -1 none
	isl200 []int32        // the same, status 200 only
	modes  map[string]int // server records served (sOK, not warm-up) by tokenization mode

	models  []string // the measured requests' models, in order of first use (compactReq.model)
	classes []string // the measured requests' traffic classes, in order of first use (compactReq.class)

	window servermetrics.Window // the measured window on the wall clock (metric.Accumulator.Window)
}

// compactReq is one measured request's check.Request (check.NewRequest, the one
// record→check mapping) packed: the record-level fields beside its metric values,
// which summary.vals keeps.
type compactReq struct {
	usagePrompt int32 // check.Request.ServerISL before the server join; -1 none
	overhead    int32
	media       int32 // check.Request.Media: image and audio tokens
	index, turn int32
	flags       uint8
	model       uint16 // position in summary.models + 1; 0 = none (fits compactReq's padding)
	class       uint8  // position in summary.classes + 1; 0 = none (MaxClasses; in the padding too)
}

const (
	rFailed          = 1 << iota
	rOverhead        // overhead known (ISLTemplate counted)
	rOverheadUnknown // templated, but the client could not render it (record.ISLTemplateUnknown)
	rCustomID        // id in summary.ids
)

type compactSrv struct {
	seq      uint64
	isl, osl int32
	client   int32 // position in reqs; -1 none; -2 a warm-up request
	flags    uint8
}

const (
	sCounted = 1 << iota // not rejected
	sOK                  // status 200, no fault, not rejected
)

// metricOptions are the metric definitions a run's load configuration chooses.
func metricOptions(lc loadgen.Config) metric.Options {
	return metric.Options{UsageOSL: lc.UsageOSL, UsageISL: lc.UsageISL, ByModel: len(lc.ModelNames) > 1,
		ByClass: true} // a run of one class has no record with a class: no breakdown
}

func newSummary(opt metric.Options, slo metric.SLO) (*summary, *metric.Accumulator) {
	a := metric.NewAccumulator(opt)
	if !slo.IsZero() {
		a.SetSLO(slo)
	}
	return &summary{opt: opt, vals: a.Values(), ids: map[int32]string{}, errs: map[int32]string{}, warm: map[string]bool{}}, a
}

// addClient accounts for one client record (called in recording order); q is scratch.
func (s *summary) addClient(a *metric.Accumulator, c *record.Client, q *metric.Request) {
	a.Add(c) // a measured request's values go to s.vals, at position len(s.reqs)
	if c.Warmup {
		s.nWarm++
		s.warm[c.RequestID] = c.OK()
		return
	}
	s.requests++
	pos := int32(len(s.reqs))
	s.vals.Get(int(pos), q)
	cr := check.NewRequest(c, q)
	r := compactReq{usagePrompt: clamp(cr.ServerISL), overhead: clamp(cr.Overhead), media: clamp(cr.Media),
		index: clamp(c.Index), turn: clamp(cr.Turn)}
	if c.Model != "" {
		k := slices.Index(s.models, c.Model)
		if k < 0 && len(s.models) < 1<<16-1 {
			k = len(s.models)
			s.models = append(s.models, c.Model)
		}
		r.model = uint16(k + 1)
	}
	if c.Class != "" {
		k := slices.Index(s.classes, c.Class)
		if k < 0 && len(s.classes) < 1<<8-1 {
			k = len(s.classes)
			s.classes = append(s.classes, c.Class)
		}
		r.class = uint8(k + 1)
	}
	if cr.ID != "req-"+strconv.Itoa(c.Index) {
		r.flags |= rCustomID
		s.ids[pos] = cr.ID
	}
	if _, ok := c.TemplateOverhead(); ok {
		r.flags |= rOverhead
		s.overhead = true
		if s.tplModes == nil {
			s.tplModes = map[string]int{}
		}
		s.tplModes[c.TokenizationMode]++
	}
	if cr.OverheadUnknown {
		r.flags |= rOverheadUnknown
	}
	if cr.Err != "" {
		s.failed++
		r.flags |= rFailed
		s.errs[pos] = cr.Err
	}
	s.reqs = append(s.reqs, r)
}

func clamp(n int) int32 { return int32(min(max(n, -1<<31), 1<<31-1)) }

// id returns the request id of reqs[i].
func (s *summary) id(i int) string {
	if s.reqs[i].flags&rCustomID != 0 {
		return s.ids[int32(i)]
	}
	return "req-" + strconv.Itoa(int(s.reqs[i].index))
}

// values is reqs[i]'s metric values.
func (s *summary) values(i int) metric.Request {
	var q metric.Request
	s.vals.Get(i, &q)
	return q
}

// request is reqs[i] in check's form, as check.FromClientOptions gives it, without
// the inter-chunk gaps.
func (s *summary) request(i int) check.Request {
	c := &s.reqs[i]
	r := check.FromValues(s.values(i))
	r.ID, r.ServerISL, r.Turn = s.id(i), int(c.usagePrompt), int(c.turn)
	if c.model > 0 {
		r.Model = s.models[c.model-1]
	}
	if c.class > 0 {
		r.Class = s.classes[c.class-1]
	}
	r.Overhead, r.OverheadUnknown, r.Media = int(c.overhead), c.flags&rOverheadUnknown != 0, int(c.media)
	if c.flags&rFailed != 0 {
		r.Err = s.errs[int32(i)]
		r.Values.OK = false
	}
	return r
}

// addServer records the server's recording; call it after every client record.
func (s *summary) addServer(recs func(func(*record.Server) error) error) error {
	s.server = true
	std := map[int32]int32{} // client index → position (standard ids)
	custom := map[string]int32{}
	for i := range s.reqs {
		if s.reqs[i].flags&rCustomID != 0 {
			custom[s.ids[int32(i)]] = int32(i)
		} else {
			std[s.reqs[i].index] = int32(i)
		}
	}
	hit := make([]bool, len(s.reqs))
	warmHit := map[string]bool{}
	err := recs(func(r *record.Server) error {
		v := compactSrv{seq: r.Seq, isl: clamp(r.ISL), osl: clamp(r.OSL), client: -1}
		if r.Rejected == "" {
			v.flags |= sCounted
			if r.Fault == "" && r.Status == 200 {
				v.flags |= sOK
			}
		}
		if _, ok := s.warm[r.RequestID]; ok {
			v.client = -2
			warmHit[r.RequestID] = true
		} else if p, ok := custom[r.RequestID]; ok {
			v.client = p
		} else if n, ok := strings.CutPrefix(r.RequestID, "req-"); ok {
			if k, err := strconv.Atoi(n); err == nil && strconv.Itoa(k) == n {
				if p, ok := std[clamp(k)]; ok && int(clamp(k)) == k {
					v.client = p
				}
			}
		}
		if v.client >= 0 {
			hit[v.client] = true
		}
		if v.flags&sOK != 0 && v.client != -2 && r.TokenizationMode != "" {
			if s.modes == nil {
				s.modes = map[string]int{}
			}
			s.modes[r.TokenizationMode]++
		}
		s.srv = append(s.srv, v)
		return nil
	})
	slices.SortStableFunc(s.srv, func(a, b compactSrv) int { return cmp.Compare(a.seq, b.seq) })
	s.shared = len(s.srv) > 0
	for i := range s.reqs {
		if s.reqs[i].flags&rFailed == 0 && !hit[i] {
			s.shared = false
		}
	}
	for id, ok := range s.warm {
		if ok && !warmHit[id] {
			s.shared = false
		}
	}
	s.islAny, s.isl200 = make([]int32, len(s.reqs)), make([]int32, len(s.reqs))
	for i := range s.islAny {
		s.islAny[i], s.isl200[i] = -1, -1
	}
	for _, v := range s.srv {
		if v.client < 0 {
			continue
		}
		if v.flags&sCounted != 0 {
			s.islAny[v.client] = v.isl
		}
		if v.flags&sCounted != 0 && v.flags&sOK != 0 {
			s.isl200[v.client] = v.isl
		}
	}
	return err
}

// requests is every measured request in check's form, with the server's input counts
// joined by request id where the client has no usage count.
func (s *summary) checkRequests() []check.Request {
	rs := make([]check.Request, len(s.reqs))
	for i := range s.reqs {
		rs[i] = s.request(i)
		if s.shared && rs[i].ServerISL < 0 && s.islAny[i] >= 0 {
			rs[i].ServerISL = int(s.islAny[i])
		}
	}
	return rs
}

// lengths is Outcome.Lengths over the summary.
func (s *summary) lengths(m check.Metric) (source string, lengths []int) {
	if !s.server {
		if m == check.OSL && s.opt.UsageOSL {
			for i := range s.reqs {
				if c := &s.reqs[i]; c.flags&rFailed == 0 {
					if q := s.values(i); q.UsageOSL >= 0 {
						lengths = append(lengths, q.UsageOSL)
					}
				}
			}
			return sourceUsage, lengths
		}
		if m == check.ISL && s.opt.UsageISL {
			if s.overhead {
				return s.chatLengths()
			}
			for i := range s.reqs {
				if c := &s.reqs[i]; c.flags&rFailed == 0 && c.usagePrompt >= 0 {
					lengths = append(lengths, int(c.usagePrompt))
				}
			}
			return sourceUsage, lengths
		}
		for i := range s.reqs {
			c := &s.reqs[i]
			if c.flags&rFailed != 0 {
				continue
			}
			q := s.values(i)
			if m == check.OSL {
				lengths = append(lengths, q.OSL)
			} else {
				lengths = append(lengths, q.ISL)
			}
		}
		return "client count", lengths
	}
	recs := s.srv
	nWarm := s.nWarm
	if !s.shared {
		recs = recs[min(nWarm, len(recs)):]
	}
	if m == check.ISL && s.overhead {
		return s.chatLengths()
	}
	for _, v := range recs {
		if v.flags&sOK == 0 || (s.shared && v.client == -2) {
			continue
		}
		if m == check.OSL {
			lengths = append(lengths, int(v.osl))
		} else {
			lengths = append(lengths, int(v.isl))
		}
	}
	return "server count", lengths
}

// serverLengths are the input and output lengths the server counted for the measured
// requests it served (warm-up requests left out as lengths does), chat-template tokens
// included; nil when there is no server recording.
func (s *summary) serverLengths() (isl, osl []int) {
	if !s.server {
		return nil, nil
	}
	recs := s.srv
	if !s.shared {
		recs = recs[min(s.nWarm, len(recs)):]
	}
	isl, osl = []int{}, []int{}
	for _, v := range recs {
		if v.flags&sOK == 0 || (s.shared && v.client == -2) {
			continue
		}
		isl, osl = append(isl, int(v.isl)), append(osl, int(v.osl))
	}
	return isl, osl
}

// islCounts are the run's mean input counts on each side (the console's ISL note).
func (s *summary) islCounts() reportgen.ISLCounts {
	var isl, overhead []float64
	for i := range s.reqs {
		c := &s.reqs[i]
		if c.flags&rFailed != 0 {
			continue
		}
		q := s.values(i)
		isl = append(isl, float64(q.ISL))
		if c.flags&rOverhead != 0 {
			overhead = append(overhead, float64(c.overhead))
		}
	}
	srvISL, _ := s.serverLengths()
	return reportgen.ISLCountsOf(isl, overhead, s.tplModes, srvISL)
}

// chatLengths: per measured successful request, the server's count (usage, else its
// record joined by id) less the request's chat-template overhead.
func (s *summary) chatLengths() (source string, lengths []int) {
	unknown := 0
	for i := range s.reqs {
		c := &s.reqs[i]
		if c.flags&rFailed != 0 {
			continue
		}
		n := int(c.usagePrompt)
		if n < 0 {
			if !s.shared || s.isl200[i] < 0 {
				continue
			}
			n = int(s.isl200[i])
		}
		if c.flags&rOverhead != 0 {
			n -= int(c.overhead)
		} else {
			unknown++
		}
		lengths = append(lengths, n)
	}
	source = "server count less each request's chat template"
	if unknown > 0 {
		source += fmt.Sprintf(" (unknown for %d requests, left whole)", unknown)
	}
	return source, lengths
}

// templateOverheads is Outcome.TemplateOverhead: per turn, the median overhead of
// the measured requests that recorded one; nil if none did.
func (s *summary) templateOverheads() []int {
	var byTurn [][]int
	for i := range s.reqs {
		c := &s.reqs[i]
		if c.flags&rOverhead == 0 || c.turn < 0 {
			continue
		}
		for len(byTurn) <= int(c.turn) {
			byTurn = append(byTurn, nil)
		}
		byTurn[c.turn] = append(byTurn[c.turn], int(c.overhead))
	}
	if len(byTurn) == 0 {
		return nil
	}
	out := make([]int, len(byTurn))
	for k, ns := range byTurn {
		if len(ns) > 0 {
			slices.Sort(ns)
			out[k] = ns[len(ns)/2]
		}
	}
	return out
}

// summarize makes the summary of in-memory recordings (server nil: none).
func summarize(cs []record.Client, ss []record.Server, opt metric.Options, slo metric.SLO) *summary {
	s, a := newSummary(opt, slo)
	var q metric.Request
	for i := range cs {
		s.addClient(a, &cs[i], &q)
	}
	if ss != nil {
		_ = s.addServer(func(f func(*record.Server) error) error {
			for i := range ss {
				_ = f(&ss[i])
			}
			return nil
		})
	}
	s.metrics = a.Metrics()
	return s
}

// summarizeFiles makes the summary in one streaming pass over the client recording
// at clientPath and, when serverPath names a file that exists, the server recording.
// A recording whose last line was cut short keeps every complete line, and the error
// wraps record.ErrTruncated.
func summarizeFiles(clientPath, serverPath string, opt metric.Options, slo metric.SLO) (*summary, error) {
	s, a := newSummary(opt, slo)
	f, err := os.Open(clientPath)
	if err != nil {
		return nil, fmt.Errorf("scenario: load: %w", err)
	}
	defer f.Close()
	var q metric.Request
	cerr := record.EachClient(f, func(c *record.Client) error {
		s.addClient(a, c, &q)
		return nil
	})
	if cerr != nil {
		cerr = fmt.Errorf("scenario: load %s: %w", clientPath, cerr)
		if !errors.Is(cerr, record.ErrTruncated) {
			return nil, cerr
		}
	}
	s.metrics = a.Metrics()
	if start, end, ok := a.Window(); ok {
		s.window = servermetrics.Window{Start: start, End: end}
	}
	if serverPath == "" {
		return s, cerr
	}
	g, err := os.Open(serverPath)
	if errors.Is(err, fs.ErrNotExist) {
		return s, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("scenario: load: %w", err)
	}
	defer g.Close()
	serr := s.addServer(func(fn func(*record.Server) error) error {
		return record.Each(g, func(r record.Server) error { return fn(&r) })
	})
	if serr != nil {
		serr = fmt.Errorf("scenario: load %s: %w", serverPath, serr)
		if !errors.Is(serr, record.ErrTruncated) {
			return nil, serr
		}
	}
	return s, errors.Join(cerr, serr)
}
