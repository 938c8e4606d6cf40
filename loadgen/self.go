package loadgen

// Self-measurement: the load generator watches itself during a run, so a run in which
// the client, not the server, was the bottleneck can be told apart from a slow server.

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Self is what the load generator measured of itself over a run (Outcome.Self).
type Self struct {
	// SendLag is how late the client started each request against its schedule (the
	// moment the sender took it up minus the pacer's due time): the pacer's and the
	// scheduler's lateness, before any connection or server time. It is measured on the
	// first turns of an open-loop run with no concurrency ceiling, where the schedule is
	// the only thing a request waits for; N = 0 otherwise (closed loop: no schedule; a
	// ceiling: the wait for a slot is the load's queueing, shown as queue time).
	SendLag LagStats `json:"send_lag"`
	// OfferedRate and AchievedRate (req/s) are measured on the same requests as
	// SendLag: their count less one over the span of their due times (what the
	// schedule offered), and over the span of their sends (what the client achieved).
	// A client that keeps its schedule, however late by a constant, achieves what was
	// offered; one that falls further and further behind achieves less. 0 when fewer
	// than two requests were measured.
	OfferedRate  float64 `json:"offered_rate,omitempty"`
	AchievedRate float64 `json:"achieved_rate,omitempty"`
	// Aborted says why the load generator stopped the run early, its client too far
	// behind its schedule (Config.MaxScheduleLag), e.g. "schedule 4.2s behind for
	// 3s at 2,000 req/s offered, 1,120 achieved: the client cannot keep up", or an
	// abort rule fired (Stop.Watch); "" when it did not. AbortedBy says which:
	// AbortSchedule, AbortObjective or AbortInvalid ("" = not stopped; a recording
	// made before AbortedBy existed has Aborted from the schedule watch only).
	Aborted   string `json:"aborted,omitempty"`
	AbortedBy string `json:"aborted_by,omitempty"`
	// ReadDelay is how long received bytes waited in the socket before the client read
	// them: the read's time minus the kernel's receive timestamp, over every read of a
	// stream timed by kernel timestamps (N = 0 when the kernel gives none).
	ReadDelay LagStats `json:"read_delay"`
	// CPUSeconds is the process's user+system CPU time over the run, and CPUs the CPUs
	// it may use (GOMAXPROCS, which follows the affinity mask and a cgroup quota,
	// lowered to a fractional cgroup quota). CPUFraction = CPUSeconds / (Elapsed·CPUs).
	// With the in-process mock the process is both client and server.
	CPUSeconds  float64 `json:"cpu_seconds"`
	CPUs        float64 `json:"cpus"`
	CPUFraction float64 `json:"cpu_fraction"`
	// GCPause is the total stop-the-world pause time of the run's garbage collections,
	// GCPauseMax the longest (to the runtime histogram's resolution), GCCount their number.
	GCPause    time.Duration `json:"gc_pause"`
	GCPauseMax time.Duration `json:"gc_pause_max"`
	GCCount    uint32        `json:"gc_count"`
	// Elapsed is the wall time measured over.
	Elapsed time.Duration `json:"elapsed"`
}

// LagStats summarises a delay distribution.
type LagStats struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
	Max time.Duration `json:"max"`
}

// lagHist is a lock-free histogram of durations: buckets 2% wide from 1 µs to over a
// minute (plus one for anything below 1 µs), so the hot paths (a read of every chunk)
// pay one atomic add. Quantiles are exact to the bucket width.
type lagHist struct {
	counts [lagBuckets]atomic.Uint64
	max    atomic.Int64
}

const (
	lagBuckets = 1000
	lagGrowth  = 1.02
)

var lagLogGrowth = math.Log(lagGrowth)

func lagIndex(d time.Duration) int {
	if d < time.Microsecond {
		return 0
	}
	i := 1 + int(math.Log(float64(d)/float64(time.Microsecond))/lagLogGrowth)
	return min(i, lagBuckets-1)
}

// lagUpper is bucket i's upper edge.
func lagUpper(i int) time.Duration {
	if i == 0 {
		return time.Microsecond
	}
	return time.Duration(float64(time.Microsecond) * math.Exp(float64(i)*lagLogGrowth))
}

func (h *lagHist) add(d time.Duration) {
	d = max(d, 0)
	h.counts[lagIndex(d)].Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// stats returns the histogram's count, median, p99 (each the upper edge of its
// bucket, capped by the maximum) and maximum.
func (h *lagHist) stats() LagStats {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	s := LagStats{N: int(n), Max: time.Duration(h.max.Load())}
	if n == 0 {
		return s
	}
	q := func(p float64) time.Duration {
		rank := uint64(math.Ceil(p * float64(n)))
		var c uint64
		for i := range h.counts {
			if c += h.counts[i].Load(); c >= rank {
				return min(lagUpper(i), s.Max)
			}
		}
		return s.Max
	}
	s.P50, s.P99 = q(0.5), q(0.99)
	return s
}

// spanMeter keeps the count and the first and last due and send times of the
// requests whose send lag is measured, for Self's offered and achieved rates.
type spanMeter struct {
	n                   atomic.Int64
	firstDue, lastDue   atomic.Int64
	firstSent, lastSent atomic.Int64
}

func (m *spanMeter) begin() {
	m.firstDue.Store(math.MaxInt64)
	m.firstSent.Store(math.MaxInt64)
}

func (m *spanMeter) add(due, sent time.Duration) {
	m.n.Add(1)
	storeMin(&m.firstDue, int64(due))
	storeMax(&m.lastDue, int64(due))
	storeMin(&m.firstSent, int64(sent))
	storeMax(&m.lastSent, int64(sent))
}

// rates returns the offered and achieved rates (see Self.OfferedRate); 0, 0 with
// fewer than two requests or a span of zero.
func (m *spanMeter) rates() (offered, achieved float64) {
	n := m.n.Load()
	due, sent := m.lastDue.Load()-m.firstDue.Load(), m.lastSent.Load()-m.firstSent.Load()
	if n < 2 || due <= 0 || sent <= 0 {
		return 0, 0
	}
	return float64(n-1) / time.Duration(due).Seconds(), float64(n-1) / time.Duration(sent).Seconds()
}

func storeMin(a *atomic.Int64, v int64) {
	for {
		m := a.Load()
		if v >= m || a.CompareAndSwap(m, v) {
			return
		}
	}
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		m := a.Load()
		if v <= m || a.CompareAndSwap(m, v) {
			return
		}
	}
}

// selfMeter gathers Self during a run.
type selfMeter struct {
	sendLag, readDelay lagHist
	span               spanMeter
	cpu0               float64
	gc0                runtime.MemStats
	start              time.Time
}

// begin takes the starting readings.
func (m *selfMeter) begin() {
	m.start = time.Now()
	m.span.begin()
	m.cpu0 = processCPU()
	runtime.ReadMemStats(&m.gc0)
}

// sent records a measured request's send at sent, due at due: its send lag and its
// place in the offered and achieved spans.
func (m *selfMeter) sent(due, sent time.Duration) {
	m.sendLag.add(sent - due)
	m.span.add(due, sent)
}

// end returns the run's Self.
func (m *selfMeter) end() Self {
	var gc runtime.MemStats
	runtime.ReadMemStats(&gc)
	s := Self{SendLag: m.sendLag.stats(), ReadDelay: m.readDelay.stats(), Elapsed: time.Since(m.start), CPUs: AvailableCPUs()}
	s.OfferedRate, s.AchievedRate = m.span.rates()
	s.CPUSeconds = max(processCPU()-m.cpu0, 0)
	if s.Elapsed > 0 && s.CPUs > 0 {
		s.CPUFraction = s.CPUSeconds / (s.Elapsed.Seconds() * s.CPUs)
	}
	s.GCCount = gc.NumGC - m.gc0.NumGC
	s.GCPause = time.Duration(gc.PauseTotalNs - m.gc0.PauseTotalNs)
	// The last (up to 256) pauses are in a ring: the run's are the newest GCCount.
	for i := uint32(0); i < min(s.GCCount, 256); i++ {
		s.GCPauseMax = max(s.GCPauseMax, time.Duration(gc.PauseNs[(gc.NumGC-1-i)%256]))
	}
	return s
}

// AvailableCPUs returns the CPUs this process may use: GOMAXPROCS (which follows the
// affinity mask and, rounded up, a cgroup CPU quota), lowered to the quota itself when
// cgroup v2's cpu.max sets a fractional one.
func AvailableCPUs() float64 {
	n := float64(runtime.GOMAXPROCS(0))
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
		if q, p, ok := strings.Cut(strings.TrimSpace(string(b)), " "); ok && q != "max" {
			quota, err1 := strconv.ParseFloat(q, 64)
			period, err2 := strconv.ParseFloat(p, 64)
			if err1 == nil && err2 == nil && quota > 0 && period > 0 {
				n = min(n, quota/period)
			}
		}
	}
	return n
}
