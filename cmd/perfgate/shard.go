package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/loadgen/coordinator"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// shardFlags are profile's scale-out flags (see loadgen's sharding notes).
type shardFlags struct {
	shards, index   int
	startAt         string
	coordinator     string
	listen          string
	timeout, margin time.Duration
}

func registerShardFlags(fs *flag.FlagSet, s *shardFlags) {
	fs.IntVar(&s.shards, "shards", 0, "[load] split the workload over N processes; this one sends global requests ≡ --shard-index (mod N), into ARTIFACT-DIR/shard-I")
	fs.IntVar(&s.index, "shard-index", -1, "[load] this process's shard, 0..N-1 (default: $"+loadgen.JobCompletionIndexEnv+", as a Kubernetes Indexed Job sets it)")
	fs.StringVar(&s.startAt, "start-at", "", "[load] start the schedule at this instant (RFC 3339, e.g. 2026-01-02T15:04:05Z) on every shard")
	fs.StringVar(&s.coordinator, "coordinator", "", "[load] start barrier URL (http://HOST:PORT): register, get one start time, measure the clock offset")
	fs.StringVar(&s.listen, "coordinator-listen", "", "[load] shard 0 serves the start barrier on ADDR (e.g. :7070); other shards ignore it")
	fs.DurationVar(&s.timeout, "coordinator-timeout", coordinator.DefaultTimeout, "[load] how long the barrier waits for every shard before starting those registered")
	fs.DurationVar(&s.margin, "coordinator-margin", coordinator.DefaultMargin, "[load] T0 = the last registration + this margin")
}

// applyShardFlags puts the shard settings into the scenario and moves the artifact
// directory to ARTIFACT-DIR/shard-I.
func applyShardFlags(sc *scenario.Scenario, o *profileOpts) error {
	s := &o.shard
	if s.shards == 0 && (s.index >= 0 || s.coordinator != "" || s.listen != "") {
		return invalidf("--shard-index, --coordinator and --coordinator-listen need --shards N")
	}
	if s.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, s.startAt)
		if err != nil {
			return invalidf("--start-at %q: want RFC 3339, e.g. 2026-01-02T15:04:05Z", s.startAt)
		}
		sc.StartAt = t
	}
	if s.shards == 0 {
		return nil
	}
	if s.shards < 1 {
		return invalidf("--shards %d: want N >= 1", s.shards)
	}
	if s.index < 0 {
		v, ok := os.LookupEnv(loadgen.JobCompletionIndexEnv)
		if !ok {
			return invalidf("--shards %d: want --shard-index I or $%s", s.shards, loadgen.JobCompletionIndexEnv)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return invalidf("$%s=%q: want an integer", loadgen.JobCompletionIndexEnv, v)
		}
		s.index = i
	}
	if s.index >= s.shards {
		return invalidf("--shard-index %d: want 0..%d", s.index, s.shards-1)
	}
	if o.numRuns > 1 || o.sweepConc != "" || o.sweepRate != "" || o.searchConc != "" || o.searchRate != "" {
		return invalidf("--shards cannot be combined with --num-runs, sweeps or searches: each run would need its own barrier and merge")
	}
	if s.startAt != "" && s.coordinator != "" {
		return invalidf("--start-at and --coordinator conflict: the coordinator fixes the start time")
	}
	sc.Shards, sc.ShardIndex = s.shards, s.index
	o.artifactDir = filepath.Join(o.artifactDir, fmt.Sprintf("shard-%d", s.index))
	// The load generator refuses modes a partition cannot reproduce; say so now.
	lc := sc.WithDefaults().Config
	if len(lc.URLs) == 0 {
		lc.URLs = []string{"http://127.0.0.1:1"} // the mock's
	}
	if err := lc.Validate(); err != nil {
		var msgs []string
		for _, l := range strings.Split(err.Error(), "\n") {
			if strings.Contains(l, "shard") {
				msgs = append(msgs, strings.TrimPrefix(l, loadgen.ErrInvalidConfig.Error()+": "))
			}
		}
		if len(msgs) > 0 {
			return invalidf("%s", strings.Join(msgs, "; "))
		}
	}
	return nil
}

// syncShard serves the barrier on shard 0 when asked, registers with the
// coordinator and sets the scenario's start time on this host's clock. stop ends the
// barrier server after the run.
func syncShard(ctx context.Context, e *env, sc *scenario.Scenario, o *profileOpts) (stop func(), err error) {
	s := &o.shard
	stop = func() {}
	if s.shards == 0 {
		return stop, nil
	}
	url := s.coordinator
	if s.listen != "" && s.index == 0 {
		ln, err := net.Listen("tcp", s.listen)
		if err != nil {
			return stop, invalidf("--coordinator-listen %s: %v", s.listen, err)
		}
		srv := &http.Server{Handler: coordinator.NewServer(s.shards, s.margin, s.timeout), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		stop = func() { _ = srv.Close() }
		if url == "" {
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			url = "http://127.0.0.1:" + port
		}
		if !o.quiet {
			fmt.Fprintf(e.stdout, "perfgate profile: shard 0 serves the start barrier for %d shards on %s\n", s.shards, ln.Addr())
		}
	}
	info := perfrun.ShardInfo{Index: s.index, Shards: s.shards, StartAt: sc.StartAt, LocalStartAt: sc.StartAt}
	if url != "" {
		cctx, cancel := context.WithTimeout(ctx, s.timeout+time.Minute)
		defer cancel()
		got, err := coordinator.Sync(cctx, url, s.index, s.shards)
		if err != nil {
			stop()
			if errors.Is(ctx.Err(), context.Canceled) {
				return func() {}, &exitError{ExitInterrupted, err}
			}
			return func() {}, runtimef("%v", err)
		}
		info = perfrun.ShardInfo{
			Index: s.index, Shards: s.shards, StartAt: got.StartAt, LocalStartAt: got.Local,
			Offset: got.Offset, RTT: got.RTT, Coordinator: got.URL, RegisteredLate: got.Late, Missing: got.Missing,
		}
		sc.StartAt = got.Local
		if !o.quiet {
			fmt.Fprintf(e.stdout, "perfgate profile: shard %d/%d: start %s (coordinator clock), offset %v ± %v\n", s.index, s.shards, got.StartAt.UTC().Format(time.RFC3339Nano), got.Offset, got.RTT/2)
		}
		if got.Late {
			fmt.Fprintf(e.stderr, "perfgate profile: shard %d registered after the barrier fixed the start; it starts late\n", s.index)
		}
		if len(got.Missing) > 0 {
			fmt.Fprintf(e.stderr, "perfgate profile: the barrier started without shard(s) %v\n", got.Missing)
		}
	}
	o.shardInfo = &info
	return stop, nil
}

// cmdCoordinator serves the start barrier of a sharded run on its own (rather than
// on shard 0, as profile --coordinator-listen does) until interrupted.
func cmdCoordinator(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "coordinator", "--shards N --listen ADDR [--timeout D] [--margin D]")
	shards := fs.Int("shards", 0, "number of shards to wait for")
	listen := fs.String("listen", ":7070", "address to serve on")
	timeout := fs.Duration("timeout", coordinator.DefaultTimeout, "how long to wait for every shard before starting those registered")
	margin := fs.Duration("margin", coordinator.DefaultMargin, "T0 = the last registration + this margin")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *shards < 1 {
		return invalidf("--shards N is required (N >= 1)")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return invalidf("--listen %s: %v", *listen, err)
	}
	srv := &http.Server{Handler: coordinator.NewServer(*shards, *margin, *timeout), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "perfgate coordinator: %d shards, serving on %s\n", *shards, ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return runtimef("%v", err)
	}
	return nil
}
