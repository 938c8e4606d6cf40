package run

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
)

// The preflight of the client's own limits: before any request, the run's needs are
// set against what this process and machine allow, so a run the client cannot carry
// out is refused (invalid configuration, exit 2) naming the limit, the need and the
// fix, instead of measuring the client's exhaustion as the server's latency.

// ErrClientLimit is wrapped (with [scenario.ErrInvalidScenario]) by the errors of [CheckLimits].
var ErrClientLimit = errors.New("scenario: client limit")

// Estimates the preflight uses (docs/validity.md). They are deliberately rough and on
// the generous side: the check refuses only runs that cannot hold.
const (
	// LimitsFileOverhead is the files a run holds besides its connections: the
	// recordings, the tokenizer, the listener and the runtime's own.
	LimitsFileOverhead = 64
	// LimitsOpenLoopWindow is how long an open-loop request without a concurrency
	// ceiling is assumed to stay in flight when estimating connections: rate × window.
	LimitsOpenLoopWindow = 2 * time.Second
	// LimitsConnMemory is the memory one open connection costs the client (its read
	// buffer, a worker's request buffer, the goroutine), LimitsBaseMemory the
	// process's own (tokenizer, runtime).
	LimitsConnMemory = 96 << 10
	LimitsBaseMemory = 256 << 20
	// LimitsRequestCPU and LimitsTokenCPU are the client's CPU per request and per
	// streamed output token (measured: bench/soak, 121 µs/request at 5,000 req/s and
	// 7.6 µs/token on 2 cores; doubled for margin).
	LimitsRequestCPU = 250 * time.Microsecond
	LimitsTokenCPU   = 15 * time.Microsecond
)

// Limits are the facts of this machine the preflight reads (zero: unknown, not
// checked). [MachineLimits] reads them; tests construct them.
type Limits struct {
	FilesSoft, FilesHard uint64  // RLIMIT_NOFILE
	Ports                int     // ephemeral ports per source address (ip_local_port_range)
	MemAvailable         uint64  // bytes (MemAvailable in /proc/meminfo)
	CPUs                 float64 // CPUs the client may use (loadgen.AvailableCPUs)
}

// MachineLimits reads this process's and machine's limits.
func MachineLimits() Limits {
	l := Limits{CPUs: loadgen.AvailableCPUs()}
	l.FilesSoft, l.FilesHard = fileLimit()
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && hi >= lo {
				l.Ports = hi - lo + 1
			}
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok && k == "MemAvailable" {
				if kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
					l.MemAvailable = kb << 10
				}
			}
		}
		f.Close()
	}
	return l
}

// Needs are what a run needs of the client, estimated from its scenario.
type Needs struct {
	// Conns is the connections open at once (to all servers); PerAddr the most to one
	// server address from one source address.
	Conns, PerAddr int
	Files          uint64
	Memory         uint64  // bytes
	CPUs           float64 // for the target rate (0: closed loop, not estimated)
}

// needs estimates sc's needs (sc with defaults).
func needs(s scenario.Scenario) Needs {
	if len(s.Classes) > 0 {
		return classesNeeds(s) // classes.go: every class's at once
	}
	c := s.Config
	shards := max(c.Shards, 1)
	conns := max(c.Concurrency, 1)
	rate := max(c.Rate, c.RateSeries.Peak()) // a series needs what its peak needs
	if rate > 0 && c.Concurrency == 0 {
		conns = int(rate*LimitsOpenLoopWindow.Seconds()) + 1
	}
	conns = (conns + shards - 1) / shards // each shard holds its part
	n := Needs{Conns: conns}
	files := uint64(conns)
	if s.Mocked() {
		files *= 2 // the in-process mock holds the other end of each connection
	}
	n.Files = files + LimitsFileOverhead
	targets := max(len(c.URLs), 1)
	n.PerAddr = (conns + targets - 1) / targets
	if src := len(c.SourceAddrs); src > 1 {
		n.PerAddr = (n.PerAddr + src - 1) / src
	}
	n.Memory = LimitsBaseMemory + uint64(conns)*LimitsConnMemory
	if s.Mocked() {
		n.Memory += uint64(conns) * LimitsConnMemory
	}
	if rate > 0 {
		osl := 0.0
		if c.OSL.Distribution != nil {
			osl = c.OSL.Distribution.Mean()
		}
		perReq := LimitsRequestCPU.Seconds() + osl*LimitsTokenCPU.Seconds()
		n.CPUs = rate / float64(shards) * perReq
	}
	return n
}

// CheckLimits is the preflight of the client's own limits under sc.Validity.Limits
// (default fail; off skips it): the open-file limit against the connections (raising
// the soft limit when the hard one allows), the ephemeral ports of one source address
// against the connections to one server address, the memory the run needs against
// what is available, and the target rate against the CPUs this client may use. A
// limit that cannot hold the run is an error wrapping [ErrClientLimit] and
// [scenario.ErrInvalidScenario], naming the limit, the need and the fix; under warn the
// problems are returned as warnings instead (err nil). [Run] calls it before any
// request.
func CheckLimits(sc scenario.Scenario) (warnings []string, err error) {
	sc = sc.WithDefaults()
	m := sc.Validity.Limits.Or(validity.ModeFail)
	if m == validity.ModeOff {
		return nil, nil
	}
	l := MachineLimits()
	if l.FilesHard > 0 && l.FilesSoft < needs(sc).Files && l.FilesHard >= needs(sc).Files {
		if raiseFileLimit(needs(sc).Files) == nil {
			l.FilesSoft, _ = fileLimit()
		}
	}
	probs := limitProblems(sc, l)
	if len(probs) == 0 {
		return nil, nil
	}
	if m == validity.ModeWarn {
		return probs, nil
	}
	errs := make([]error, len(probs))
	for i, p := range probs {
		errs[i] = fmt.Errorf("%w: %w: %s", scenario.ErrInvalidScenario, ErrClientLimit, p)
	}
	return nil, errors.Join(errs...)
}

// limitProblems sets sc's needs against l.
func limitProblems(s scenario.Scenario, l Limits) []string {
	n := needs(s)
	var out []string
	if l.FilesSoft > 0 && n.Files > l.FilesSoft {
		out = append(out, fmt.Sprintf("open files: the run needs about %d (%d connections%s + %d), the limit is %d (hard %d); fix: ulimit -n %d (raise the hard limit: limits.conf, systemd LimitNOFILE, docker --ulimit nofile), or split the load over shards",
			n.Files, n.Conns, map[bool]string{true: " × 2 with the in-process mock", false: ""}[s.Mocked()], LimitsFileOverhead, l.FilesSoft, l.FilesHard, n.Files))
	}
	if l.Ports > 0 && n.PerAddr > l.Ports {
		out = append(out, fmt.Sprintf("ephemeral ports: the run opens about %d connections to one server address from one source address, the port range allows %d; fix: more source addresses (source_addrs), more server addresses, shards on more machines, or widen net.ipv4.ip_local_port_range",
			n.PerAddr, l.Ports))
	}
	if l.MemAvailable > 0 && n.Memory > l.MemAvailable {
		out = append(out, fmt.Sprintf("memory: the run needs about %d MiB (%d connections), %d MiB are available; fix: fewer connections per process (shards), or a machine with more memory",
			n.Memory>>20, n.Conns, l.MemAvailable>>20))
	}
	if l.CPUs > 0 && n.CPUs > l.CPUs*validity.DefaultMaxClientCPU {
		out = append(out, fmt.Sprintf("rate: %g req/s needs about %.1f CPUs of client time (%v a request, %v a streamed token), this client may use %g; fix: shards (--shards, perfgate k8s), more CPUs (GOMAXPROCS, cgroup quota), or a lower rate",
			s.Rate, n.CPUs, LimitsRequestCPU, LimitsTokenCPU, l.CPUs))
	}
	return out
}
