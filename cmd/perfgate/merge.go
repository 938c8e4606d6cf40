package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/merge"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// cmdMerge makes the artifact directories of a sharded run (profile --shards N) one
// run and gates it once: records in global order, metrics, exports, the HTML report
// and verdicts computed on the merge by the code a single run's directory gets
// (merge.Shards: perfrun.LoadMerged and WriteReports). The exit code is the gate's.
func cmdMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "merge", "--artifact-dir OUT DIR... [--assert EXPR]... [--wait DURATION]")
	out := fs.String("artifact-dir", "", "directory of the merged run (required)")
	var asserts stringList
	fs.Var(&asserts, "assert", "assertion (repeatable), as profile takes it; replaces the scenario's objectives")
	goodput := fs.String("goodput", "", "goodput SLO, as profile takes it, e.g. \"time_to_first_token:200\" (ms)")
	maxSkew := fs.Duration("max-skew", merge.DefaultMaxSkew, "flag shards whose start may be further than this from T0")
	wait := fs.Duration("wait", 0, "wait up to this long for every shard's directory to be complete (its manifest written), e.g. in a Kubernetes merge Job")
	quiet := fs.Bool("quiet", false, "print only the verdicts and where the reports are")
	dirs, flags := splitPositional(fs, args)
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if *out == "" || len(dirs) == 0 {
		return invalidf("want perfgate merge --artifact-dir OUT DIR... (shard directories, or one directory holding shard-*)")
	}
	if *wait > 0 {
		if err := waitShards(ctx, dirs, *wait); err != nil {
			return err
		}
	}
	shardDirs := expandShardDirs(dirs, *out)
	opts := merge.Options{MaxSkew: *maxSkew, Command: redactArgs(e.args)}
	if len(asserts) > 0 || *goodput != "" {
		opts.Adjust = func(sc *scenario.Scenario) error { return regate(sc, asserts, *goodput) }
	}
	o, rep, err := merge.Shards(*out, shardDirs, opts)
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, merge.ErrShards):
		return invalidf("%s", strings.ReplaceAll(err.Error(), merge.ErrShards.Error()+": ", ""))
	case err != nil && o == nil:
		return invalidf("%v", strings.TrimPrefix(err.Error(), "scenario: "))
	case err != nil:
		return runtimef("%v", err)
	}
	if why := o.Aborted(); why != "" {
		// Shards stopped early come first, which and why: the merged run holds what
		// they measured before the stop, beside the other shards' whole runs.
		fmt.Fprintf(e.stdout, "ABORTED (%s): %s\n", abortedExit(o.AbortedBy()), why)
	}
	if !*quiet {
		fmt.Fprintf(e.stdout, "perfgate merge: %d shards, %d client records, %d server records -> %s\n", rep.Shards, rep.Records, rep.ServerRecords, *out)
		printTable(e, o)
	}
	for _, s := range rep.Skewed {
		fmt.Fprintf(e.stderr, "perfgate merge: skew: %s\n", s)
	}
	if !*quiet {
		printPins(e.stdout, o.Pins)
	}
	// The merged run's validity: its shards' clients, limits and caches, and the
	// steady state and tail samples of the merged data. An invalid one is not judged.
	if err := invalidMeasurement(e.stdout, o.Verdicts(check.KindValidity)); err != nil {
		return err
	}
	vs := o.Check()
	ok := printVerdicts(e.stdout, vs)
	fmt.Fprintf(e.stdout, "report:    %s\n", filepath.Join(*out, reportgen.RunReportFile))
	if o.Metrics.Value(record.MetricRequestCount) == 0 {
		return runtimef("no request was completed in any shard: nothing measured")
	}
	if len(vs) > 0 {
		_, answer := check.Answer(vs)
		fmt.Fprintln(e.stdout, answer)
		if !ok {
			return assertFailed(vs)
		}
	}
	return nil
}

// expandShardDirs replaces a directory holding shard-* subdirectories (and no
// recording of its own) with those subdirectories; out is never a shard.
func expandShardDirs(dirs []string, out string) []string {
	var res []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, perfrun.ClientFile)); err != nil {
			if m, _ := filepath.Glob(filepath.Join(d, "shard-*")); len(m) > 0 {
				slices.Sort(m)
				res = append(res, m...)
				continue
			}
		}
		res = append(res, d)
	}
	return slices.DeleteFunc(res, func(d string) bool { return filepath.Clean(d) == filepath.Clean(out) })
}

// waitShards waits until the shard directories under dirs are complete: as many
// with a manifest as the first scenario.json's shard count.
func waitShards(ctx context.Context, dirs []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		ds := expandShardDirs(dirs, "")
		want, done := 0, 0
		for _, d := range ds {
			var sc scenario.Scenario
			if b, err := os.ReadFile(filepath.Join(d, perfrun.ScenarioFile)); err == nil && json.Unmarshal(b, &sc) == nil {
				want = max(want, sc.Shards)
			}
			if _, err := os.Stat(filepath.Join(d, reportgen.ManifestFile)); err == nil {
				done++
			}
		}
		if want > 0 && done >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return runtimef("--wait %v: %d of %d shard(s) complete in %s", wait, done, want, strings.Join(dirs, " "))
		}
		select {
		case <-ctx.Done():
			return &exitError{ExitInterrupted, ctx.Err()}
		case <-time.After(time.Second):
		}
	}
}

// splitPositional separates positional arguments (directories) from flags and
// their values, wherever they appear.
func splitPositional(fs *flag.FlagSet, args []string) (pos, flags []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		fl := fs.Lookup(name)
		if fl == nil || hasValue {
			continue
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return pos, flags
}
