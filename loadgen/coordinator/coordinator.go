// Package coordinator is the start barrier of a sharded run. The shards of one workload
// (loadgen.Config.Shards) register with it, and once all have registered (or a timeout
// passed) it answers each with one start time T0 = now + margin on its own clock. Each
// shard measures its clock's offset to the coordinator's (NTP-style: several round
// trips, the one with the smallest round-trip time kept) and starts its run clock at T0
// translated to its own clock, so N hosts start one schedule together.
//
//	srv := coordinator.NewServer(4, coordinator.DefaultMargin, coordinator.DefaultTimeout)
//	go http.Serve(ln, srv)                               // shard 0, or a pod of its own
//	s, err := coordinator.Sync(ctx, "http://job-0.svc:7070", 2, 4)
//	cfg.StartAt = s.StartAt                              // on this host's clock
//
// It does not move the shards' clocks, nor retry a shard that never registers: a
// shard that registers after T0 gets T0 anyway (and starts late, which its record
// says), and the merge reports the shards that are missing.
package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of [NewServer] and [Sync].
const (
	// DefaultMargin is added to the instant the last shard registers to make T0: time
	// for the answer to reach every shard and for them to get ready.
	DefaultMargin = 2 * time.Second
	// DefaultTimeout is how long the barrier waits for all shards before it releases
	// those registered (the rest are reported missing).
	DefaultTimeout = 5 * time.Minute
	// Rounds is the number of round trips Sync times to measure the clock offset.
	Rounds = 8
)

// Registration is the coordinator's answer to a shard.
type Registration struct {
	// StartAt is T0 on the coordinator's clock.
	StartAt time.Time `json:"start_at"`
	// Registered lists the shards registered when T0 was fixed; Missing the others.
	Registered []int `json:"registered"`
	Missing    []int `json:"missing,omitempty"`
	// Late reports that this shard registered after T0 was fixed.
	Late bool `json:"late,omitempty"`
}

// Server is the barrier, an http.Handler: GET /time answers the coordinator's clock
// (Unix nanoseconds), POST /register?shard=I&shards=N blocks until T0 is fixed and
// answers a [Registration]. Safe for concurrent use.
type Server struct {
	shards          int
	margin, timeout time.Duration
	now             func() time.Time

	mu       sync.Mutex
	seen     map[int]bool
	released chan struct{}
	reg      Registration
	timer    *time.Timer
}

var _ http.Handler = (*Server)(nil)

// NewServer returns a barrier for shards shards; zero margin and timeout take the
// defaults.
func NewServer(shards int, margin, timeout time.Duration) *Server {
	if margin <= 0 {
		margin = DefaultMargin
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Server{shards: shards, margin: margin, timeout: timeout, now: time.Now, seen: map[int]bool{}, released: make(chan struct{})}
}

// ServeHTTP implements [http.Handler].
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/time":
		fmt.Fprintf(w, "%d\n", s.now().UnixNano())
	case "/register":
		var i, n int
		if _, err := fmt.Sscan(r.URL.Query().Get("shard")+" "+r.URL.Query().Get("shards"), &i, &n); err != nil || n != s.shards || i < 0 || i >= n {
			http.Error(w, fmt.Sprintf("coordinator: want shard=0..%d and shards=%d", s.shards-1, s.shards), http.StatusBadRequest)
			return
		}
		reg, err := s.register(r.Context(), i)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reg)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) register(ctx context.Context, i int) (Registration, error) {
	s.mu.Lock()
	select {
	case <-s.released:
		reg := s.reg
		s.mu.Unlock()
		reg.Late = !slices.Contains(reg.Registered, i)
		return reg, nil
	default:
	}
	s.seen[i] = true
	if s.timer == nil {
		s.timer = time.AfterFunc(s.timeout, func() { s.release() })
	}
	all := len(s.seen) == s.shards
	s.mu.Unlock()
	if all {
		s.release()
	}
	select {
	case <-s.released:
	case <-ctx.Done():
		return Registration{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reg, nil
}

// release fixes T0 (once) and wakes every waiting shard.
func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.released:
		return
	default:
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.reg = Registration{StartAt: s.now().Add(s.margin)}
	for i := range s.shards {
		if s.seen[i] {
			s.reg.Registered = append(s.reg.Registered, i)
		} else {
			s.reg.Missing = append(s.reg.Missing, i)
		}
	}
	close(s.released)
}

// Synced is what a shard learned from the coordinator.
type Synced struct {
	Registration
	// Local is T0 on this host's clock: Registration.StartAt − Offset. Use it as
	// loadgen.Config.StartAt.
	Local time.Time `json:"local_start_at"`
	// Offset is the coordinator's clock minus this host's (estimated at the round trip
	// with the smallest RTT); RTT is that round trip's time, which bounds the offset's
	// error by RTT/2.
	Offset time.Duration `json:"offset_ns"`
	RTT    time.Duration `json:"rtt_ns"`
	// URL is the coordinator asked.
	URL string `json:"coordinator"`
}

// Sync registers shard of shards with the coordinator at url, waits for T0 and
// measures the clock offset. Connection failures are retried until ctx ends (the
// coordinator's pod may start after this one).
func Sync(ctx context.Context, url string, shard, shards int) (Synced, error) {
	url = strings.TrimSuffix(url, "/")
	cl := &http.Client{}
	var reg Registration
	for {
		err := post(ctx, cl, fmt.Sprintf("%s/register?shard=%d&shards=%d", url, shard, shards), &reg)
		if err == nil {
			break
		}
		var he httpError
		if errors.As(err, &he) && he.status == http.StatusBadRequest {
			return Synced{}, err
		}
		select {
		case <-ctx.Done():
			return Synced{}, fmt.Errorf("coordinator: register with %s: %w (last: %v)", url, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	s := Synced{Registration: reg, URL: url}
	best := time.Duration(-1)
	for range Rounds {
		t0 := time.Now()
		ts, err := serverTime(ctx, cl, url+"/time")
		t1 := time.Now()
		if err != nil {
			return s, err
		}
		rtt := t1.Sub(t0)
		if best < 0 || rtt < best {
			best = rtt
			mid := t0.Add(rtt / 2)
			s.Offset, s.RTT = ts.Sub(mid), rtt
		}
	}
	s.Local = reg.StartAt.Add(-s.Offset)
	return s, nil
}

type httpError struct {
	status int
	msg    string
}

func (e httpError) Error() string { return fmt.Sprintf("coordinator: HTTP %d: %s", e.status, e.msg) }

func post(ctx context.Context, cl *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return httpError{resp.StatusCode, strings.TrimSpace(b.String())}
	}
	if err := json.Unmarshal(b.Bytes(), v); err != nil {
		return fmt.Errorf("coordinator: register: %w", err)
	}
	return nil
}

func serverTime(ctx context.Context, cl *http.Client, url string) (time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("coordinator: %w", err)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("coordinator: time: %w", err)
	}
	defer resp.Body.Close()
	var ns int64
	if _, err := fmt.Fscan(resp.Body, &ns); err != nil {
		return time.Time{}, fmt.Errorf("coordinator: time: %w", err)
	}
	return time.Unix(0, ns), nil
}
