// Command shard benchmarks perfgate's scale-out: merging the records of many shards.
// `gen` writes synthetic shard directories (a scenario.json and a client.jsonl each,
// records of a mock-like run), and `merge` times merge.Shards over them — the one
// code path perfgate merge and a single run's report use — printing wall time, CPU time
// and peak RSS. A benchmark: it prints numbers, it asserts nothing.
//
//	go run ./bench/shard gen -dir /tmp/shards -shards 4 -records 1000000
//	go run ./bench/shard merge -dir /tmp/shards -out /tmp/merged
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/perftest/merge"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: shard gen|merge [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "", "root of the shard directories")
	out := fs.String("out", "", "merged directory (merge)")
	shards := fs.Int("shards", 4, "shards (gen)")
	records := fs.Int("records", 1_000_000, "records over all shards (gen)")
	_ = fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "gen":
		if err := gen(*dir, *shards, *records); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "merge":
		t0 := time.Now()
		var ru0 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		m, _ := filepath.Glob(filepath.Join(*dir, "shard-*"))
		o, rep, err := merge.Shards(*out, m, merge.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		cpu := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
		fmt.Printf("merge: %d shards, %d records: wall %v, cpu %v, peak RSS %d MiB (%.0f B/record), verdicts %d\n",
			rep.Shards, rep.Records, time.Since(t0).Round(time.Millisecond), cpu.Round(time.Millisecond), ru.Maxrss/1024, float64(ru.Maxrss*1024)/float64(rep.Records), len(o.Check()))
	default:
		fmt.Fprintln(os.Stderr, "usage: shard gen|merge [flags]")
		os.Exit(2)
	}
}

// gen writes shards directories of a 1,000 req/s streamed run: request g on shard
// g mod shards, 16 chunks each.
func gen(root string, shards, records int) error {
	rng := rand.New(rand.NewPCG(1, 1))
	start := time.Now().UnixNano()
	for i := range shards {
		d := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		sc := scenario.Scenario{Name: "bench-merge", Config: loadgen.Config{Target: loadgen.Target{URLs: []string{"http://127.0.0.1:8000"}}, Workload: loadgen.Workload{Seed: 1}, Load: loadgen.Load{Rate: 1000}, Stop: loadgen.Stop{Requests: records}}}
		sc.Shards, sc.ShardIndex = shards, i
		b, _ := json.Marshal(sc)
		if err := os.WriteFile(filepath.Join(d, run.ScenarioFile), b, 0o644); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(d, run.ClientFile))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		enc := record.NewEncoder(w)
		for g := i; g < records; g += shards {
			sched := time.Duration(g) * time.Millisecond
			sent := sched + time.Duration(rng.IntN(50))*time.Microsecond
			c := record.Client{Index: g, RequestID: fmt.Sprintf("req-%d", g), URL: sc.URLs[0], Endpoint: "chat", Model: "m", Stream: true,
				RunStartUnixNano: start, Scheduled: sched, Sent: sent, Status: 200, ISL: 100 + rng.IntN(50), ISLExact: true, RequestedOSL: 16, OSL: 16,
				UsagePromptTokens: 120, UsageCompletionTokens: 16}
			t := sent + 20*time.Millisecond
			for range 16 {
				c.Chunks = append(c.Chunks, record.Chunk{T: t, Tokens: 1, Choices: true})
				t += 5 * time.Millisecond
			}
			c.Done = t
			if err := enc.Encode(&c); err != nil {
				return err
			}
		}
		if err := enc.Flush(); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
