package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"golang.org/x/term"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// The --ui-type values: how a run shows its progress.
const (
	uiDashboard = "dashboard" // a live full-screen view (bubbletea), for a terminal
	uiSimple    = "simple"    // the one progress line (progress.go): redrawn on a terminal, a line every 5 s in a log
	uiNone      = "none"      // nothing while the run goes
)

// uiTypes are the --ui-type values, in the order the help lists them.
var uiTypes = []string{uiDashboard, uiSimple, uiNone}

// resolveUI returns the display a run uses: the --ui-type given, else the dashboard on
// a terminal and the simple line otherwise (a CI log). A dashboard asked for where
// stderr is no terminal (or TERM=dumb) is the simple line: a full-screen view written
// into a log is unreadable.
func resolveUI(flag string, tty bool) string {
	can := tty && os.Getenv("TERM") != "dumb"
	switch {
	case flag == "" && can, flag == uiDashboard && can:
		return uiDashboard
	case flag == uiNone:
		return uiNone
	}
	return uiSimple
}

// runDisplay is what runOne drives: the simple progress line or the dashboard.
type runDisplay interface {
	sink(record.Client)
	begin()
	end()
}

// dashWindow is the span of the "last window" columns.
const dashWindow = 10 * time.Second

// dashQueue is how many finished records wait for the dashboard's aggregator; when it
// is full a record is skipped for the display (counted, shown), never waited for.
const dashQueue = 1 << 14

// dashboard is the live terminal view of a run. The load generator's collector calls
// sink, which hands the record to a bounded queue without ever blocking; one
// aggregator goroutine derives its values (metric.Request, the catalogue's
// definitions) and sends snapshots to a bubbletea program several times a second.
// end drains the queue, shows the final frame, restores the terminal (alt screen
// left, cursor shown, terminal modes back) and prints the final frame on the normal
// screen, where it stays.
type dashboard struct {
	out      io.Writer
	in       *os.File // a terminal to read keys from (Ctrl-C, q), or nil
	label    string
	total    int           // expected measured requests; 0 = unknown
	duration time.Duration // the run's measured duration; 0 = set by requests
	opt      metric.Options
	width    int
	// interrupt is called on Ctrl-C typed into the dashboard (the terminal is in raw
	// mode: the key is not a signal): it interrupts the run as SIGINT does.
	interrupt func()
	// firstView, when set, is called as the first frame is drawn (a test holds the
	// program there, where bubbletea does not yet watch for resizes).
	firstView func()

	q        chan record.Client
	dropped  atomic.Int64
	inFlight atomic.Int64 // the load generator's requests in flight, as last sampled (setInFlight)
	start    time.Time
	prog     *tea.Program
	unwatch  func() // stops watchResize
	aggDone  chan struct{}
	progEnd  chan struct{}
	final    dashSnap
}

func newDashboard(out io.Writer, in *os.File, label string, total int, duration time.Duration, opt metric.Options) *dashboard {
	if in != nil && !term.IsTerminal(int(in.Fd())) {
		in = nil
	}
	return &dashboard{out: out, in: in, label: label, total: total, duration: duration, opt: opt,
		interrupt: interruptSelf, q: make(chan record.Client, dashQueue)}
}

// interruptSelf sends this process SIGINT, so that Ctrl-C typed into the dashboard
// stops the run exactly as Ctrl-C at a shell prompt does.
func interruptSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

// sink queues r for the display, or skips it when the queue is full: it never blocks
// the load generator's collector.
func (d *dashboard) sink(r record.Client) {
	select {
	case d.q <- r:
	default:
		d.dropped.Add(1)
	}
}

// setInFlight keeps the requests in flight the load generator counted last
// (run.OnInFlight); the next frame shows it.
func (d *dashboard) setInFlight(n int) { d.inFlight.Store(int64(n)) }

// termWidth is the width of the terminal the dashboard draws on, when its output is one.
func (d *dashboard) termWidth() (int, bool) {
	f, ok := d.out.(*os.File)
	if !ok {
		return 0, false
	}
	w, _, err := term.GetSize(int(f.Fd()))
	return w, err == nil
}

func (d *dashboard) begin() {
	d.start = time.Now()
	opts := []tea.ProgramOption{tea.WithOutput(d.out), tea.WithoutSignalHandler(), tea.WithoutCatchPanics()}
	if d.in != nil {
		opts = append(opts, tea.WithInput(d.in))
	} else {
		opts = append(opts, tea.WithInput(nil))
	}
	m := &dashModel{d: d, width: d.width}
	m.snap.phase = "starting"
	d.prog = tea.NewProgram(m, opts...)
	d.unwatch = watchResize(d.prog)
	d.aggDone, d.progEnd = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(d.progEnd)
		_, _ = d.prog.Run()
	}()
	go d.aggregate()
}

// end stops the display after the run: the queue is drained, the final frame shown,
// the terminal restored and the final frame printed where it stays.
func (d *dashboard) end() {
	close(d.q)
	<-d.aggDone
	d.prog.Send(finalMsg(d.final))
	select {
	case <-d.progEnd:
	case <-time.After(2 * time.Second):
		d.prog.Kill() // restores the terminal too
		<-d.progEnd
	}
	d.unwatch()
	fmt.Fprintln(d.out, render(d.final, 0, d.label))
}

// aggregate consumes the queue, sending a snapshot every tick and the final one when
// the queue is closed.
func (d *dashboard) aggregate() {
	defer close(d.aggDone)
	a := newDashAgg(d.opt)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	whole := time.Time{} // when the whole-run quantiles were last computed
	var wholeCost time.Duration
	for {
		select {
		case r, ok := <-d.q:
			if !ok {
				d.final = a.snapshot(d, true)
				d.final.inFlight = 0 // the run has ended: nothing is in flight
				return
			}
			a.add(&r)
		case <-t.C:
			// The whole-run quantiles sort every value: recomputed at most once a second
			// and at most 5% of the time, so that a long run's display costs the load nothing.
			full := time.Since(whole) >= max(time.Second, 20*wholeCost)
			t0 := time.Now()
			s := a.snapshot(d, full)
			if full {
				whole, wholeCost = time.Now(), time.Since(t0)
			}
			d.prog.Send(snapMsg(s))
		}
	}
}

// sorted is a growing set of values kept sorted for quantiles: new values wait in
// tail until flush sorts them and merges them in (O(n) a flush, not O(n log n)).
type sorted struct{ s, tail []float64 }

func (v *sorted) add(x float64) {
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		v.tail = append(v.tail, x)
	}
}

func (v *sorted) flush() []float64 {
	if len(v.tail) == 0 {
		return v.s
	}
	slices.Sort(v.tail)
	m := make([]float64, 0, len(v.s)+len(v.tail))
	i, j := 0, 0
	for i < len(v.s) && j < len(v.tail) {
		if v.tail[j] < v.s[i] {
			m = append(m, v.tail[j])
			j++
		} else {
			m = append(m, v.s[i])
			i++
		}
	}
	m = append(append(m, v.s[i:]...), v.tail[j:]...)
	v.s, v.tail = m, v.tail[:0]
	return v.s
}

// dashRows are the per-request metrics the dashboard shows, by catalogue name (their
// values come from the catalogue's definitions, as metrics.json's do).
var dashRows = []struct{ name, label string }{
	{"time_to_first_token", "TTFT"},
	{"inter_token_latency", "ITL"},
	{"request_latency", "latency"},
	{"client_queue_time", "send lag"},
}

// dashEntry is one measured request's values for the last-window columns.
type dashEntry struct {
	done time.Duration
	v    [4]float64 // dashRows' values, NaN = none
	out  int        // output tokens ([metric.Request.Output])
	ok   bool
}

// dashAgg is the aggregator's state; only the aggregator goroutine touches it.
type dashAgg struct {
	opt    metric.Options
	defs   [4]metric.Def
	q      metric.Request
	whole  [4]sorted
	window []dashEntry // measured requests, in completion order, pruned to the window
	tot    metric.Totals
	first  time.Duration // first measured send, -1 = none
	last   time.Duration // last measured completion
	warmup int
	prime  int
	phase  string
	final  [4]record.Stat
	have   bool
}

func newDashAgg(opt metric.Options) *dashAgg {
	a := &dashAgg{opt: opt, first: -1, phase: "starting"}
	for i, r := range dashRows {
		d, ok := metric.Lookup(r.name)
		if !ok {
			panic("dashboard: no metric " + r.name)
		}
		a.defs[i] = d
	}
	return a
}

func (a *dashAgg) add(r *record.Client) {
	if r.Warmup {
		if strings.HasPrefix(r.RequestID, "prime-") {
			a.prime++
			a.phase = "priming"
		} else {
			a.warmup++
			a.phase = "warm-up"
		}
		return
	}
	a.phase = "measured"
	a.q.Reset(r, a.opt)
	if a.first < 0 || r.Sent < a.first {
		a.first = r.Sent
	}
	a.last = max(a.last, r.Done)
	e := dashEntry{done: r.Done, ok: a.q.OK}
	if !a.q.OK {
		a.tot.Errors++
		a.window = append(a.window, e)
		return
	}
	a.tot.OK++
	a.tot.ISL += a.q.ISL
	a.tot.OSL += a.q.OSL
	a.tot.Reasoning += a.q.Reasoning
	e.out = a.q.Output()
	for i, d := range a.defs {
		e.v[i] = math.NaN()
		if v, ok := d.Value(&a.q); ok {
			e.v[i] = v
			a.whole[i].add(v)
		}
	}
	a.window = append(a.window, e)
}

// dashSnap is one frame's numbers.
type dashSnap struct {
	phase            string
	elapsed, left    time.Duration // left < 0 = unknown
	done, failed     int
	total            int
	warmup, prime    int
	dropped          int64
	inFlight         int64 // requests in flight, as the load generator last counted them
	win, run         [4]record.Stat
	winOut, winReq   float64 // last window: output tok/s, req/s
	runOut, runReq   float64 // whole run, by the catalogue's definitions
	haveRun, haveWin bool
	final            bool
}

func (a *dashAgg) snapshot(d *dashboard, full bool) dashSnap {
	s := dashSnap{phase: a.phase, elapsed: time.Since(d.start), left: -1, done: a.tot.OK + a.tot.Errors, failed: a.tot.Errors,
		total: d.total, warmup: a.warmup, prime: a.prime, dropped: d.dropped.Load(), inFlight: d.inFlight.Load()}
	// The last window: requests completed within dashWindow of the latest completion.
	cut := a.last - dashWindow
	k := 0
	for k < len(a.window) && a.window[k].done < cut {
		k++
	}
	a.window = a.window[k:]
	if len(a.window) > 0 {
		var cols [4][]float64
		out, n := 0, 0
		for _, e := range a.window {
			n++
			if !e.ok {
				continue
			}
			out += e.out
			for i, v := range e.v {
				if !math.IsNaN(v) {
					cols[i] = append(cols[i], v)
				}
			}
		}
		for i := range cols {
			s.win[i] = metric.Summarize(cols[i], "ms")
		}
		span := min(dashWindow, a.last-a.first).Seconds()
		if span > 0 {
			s.winOut, s.winReq = float64(out)/span, float64(n)/span
		}
		s.haveWin = true
	}
	if full || !a.have {
		for i := range a.whole {
			xs := a.whole[i].flush()
			st := record.Stat{Unit: "ms", Count: len(xs)}
			if len(xs) > 0 {
				st.Min, st.Max = xs[0], xs[len(xs)-1]
				st.P50, st.P90, st.P99 = metric.QuantileSorted(xs, 0.5), metric.QuantileSorted(xs, 0.9), metric.QuantileSorted(xs, 0.99)
			}
			a.final[i] = st
		}
		a.have = true
	}
	s.run = a.final
	t := a.tot
	if a.first >= 0 && a.last > a.first {
		t.Duration = (a.last - a.first).Seconds()
	}
	if d, ok := metric.Lookup("output_token_throughput"); ok && d.Total != nil {
		s.runOut, _ = d.Total(&t)
	}
	if d, ok := metric.Lookup("request_throughput"); ok && d.Total != nil {
		s.runReq, _ = d.Total(&t)
	}
	s.haveRun = t.OK > 0
	switch {
	case d.duration > 0 && a.first >= 0:
		s.left = max(d.duration-(a.last-a.first), 0)
	case d.total > 0 && s.winReq > 0:
		s.left = time.Duration(float64(d.total-s.done) / s.winReq * float64(time.Second))
	}
	return s
}

// The bubbletea program's messages.
type (
	snapMsg  dashSnap
	finalMsg dashSnap
)

type dashModel struct {
	d      *dashboard
	snap   dashSnap
	width  int
	viewed bool
}

func (m *dashModel) Init() tea.Cmd { return nil }

func (m *dashModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case snapMsg:
		m.snap = dashSnap(msg)
	case finalMsg:
		m.snap = dashSnap(msg)
		m.snap.final = true
		return m, tea.Quit
	case tea.WindowSizeMsg:
		m.width = msg.Width
		// bubbletea sends the size it read at start from a goroutine of its own, so that
		// message can arrive after the one a resize at the start brought: a size that is
		// not the terminal's any more asks for the terminal's again.
		if w, ok := m.d.termWidth(); ok && w != msg.Width {
			return m, tea.RequestWindowSize
		}
	case tea.KeyPressMsg:
		if k := msg.String(); k == "ctrl+c" || k == "q" {
			m.d.interrupt()
		}
	}
	return m, nil
}

func (m *dashModel) View() tea.View {
	if !m.viewed {
		m.viewed = true
		if m.d.firstView != nil {
			m.d.firstView()
		}
	}
	v := tea.NewView(render(m.snap, m.width, m.d.label))
	v.AltScreen = true // left when the program ends
	return v
}

var (
	dashTitle = lipgloss.NewStyle().Bold(true)
	dashBox   = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
)

// render draws a frame; width > 0 boxes it and cuts it to that width (the live view),
// 0 draws the plain text the final frame leaves on the screen.
func render(s dashSnap, width int, label string) string {
	var b strings.Builder
	count := fmt.Sprint(s.done)
	if s.total > 0 {
		count = fmt.Sprintf("%d/%d", s.done, s.total)
	}
	left := "-"
	if s.left >= 0 {
		left = s.left.Round(100 * time.Millisecond).String()
	}
	if s.final {
		left = "done"
	}
	fmt.Fprintf(&b, "%s  phase %s  elapsed %s  left %s\n", dashTitle.Render("perfgate "+label), s.phase, s.elapsed.Round(100*time.Millisecond), left)
	fmt.Fprintf(&b, "requests %s  failed %d  warm-up %d  in flight %d", count, s.failed, s.warmup, s.inFlight)
	if s.prime > 0 {
		fmt.Fprintf(&b, "  priming %d", s.prime)
	}
	if s.dropped > 0 {
		fmt.Fprintf(&b, "  (display skipped %d)", s.dropped)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-14s %10s %10s   %10s %10s %10s\n", "(ms)", "last p50", "last p99", "run p50", "run p90", "run p99")
	for i, r := range dashRows {
		w, a := s.win[i], s.run[i]
		fmt.Fprintf(&b, "%-14s %10s %10s   %10s %10s %10s\n", r.label,
			num(w.Count, w.P50), num(w.Count, w.P99), num(a.Count, a.P50), num(a.Count, a.P90), num(a.Count, a.P99))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-14s %10s %10s   %10s %10s\n", "throughput", "last tok/s", "last req/s", "run tok/s", "run req/s")
	fmt.Fprintf(&b, "%-14s %10s %10s   %10s %10s", "", num(b2i(s.haveWin), s.winOut), num(b2i(s.haveWin), s.winReq), num(b2i(s.haveRun), s.runOut), num(b2i(s.haveRun), s.runReq))
	if width <= 0 {
		return b.String()
	}
	box := dashBox.Render(b.String())
	lines := strings.Split(box, "\n")
	for i, l := range lines {
		if lipgloss.Width(l) > width {
			lines[i] = truncateCells(l, width)
		}
	}
	return strings.Join(lines, "\n")
}

// truncateCells cuts a line to width terminal cells.
func truncateCells(l string, width int) string {
	return lipgloss.NewStyle().MaxWidth(width).Render(l)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// num formats a value shown on the dashboard ("-" when there is none).
func num(n int, v float64) string {
	if n == 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
