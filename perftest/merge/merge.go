package merge

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// DefaultMaxSkew is the start skew [Shards] flags by default: a shard whose run clock
// may have started further than this from T0 (how late it started, plus half the
// round trip that bounds its clock-offset error) shifts its share of the arrivals by
// as much, which a 1 ms-resolution arrival test would see.
const DefaultMaxSkew = 5 * time.Millisecond

// Options adjust [Shards]. The zero value is the defaults.
type Options struct {
	// MaxSkew is the start skew beyond which a shard is flagged; zero = DefaultMaxSkew.
	MaxSkew time.Duration
	// Command is recorded in the merged run's manifest.
	Command []string
	// Adjust, if set, edits the merged scenario before its metrics and verdicts are
	// computed (other objectives, as `perfgate merge --assert` gives them).
	Adjust func(*scenario.Scenario) error
}

// Report is what [Shards] wrote into merge.json.
type Report struct {
	Shards  int             `json:"shards"`
	Dirs    []string        `json:"dirs"`
	Info    []run.ShardInfo `json:"info"`
	MaxSkew time.Duration   `json:"max_skew_ns"`
	// Skewed lists the shards whose start skew exceeds MaxSkew, one line each.
	Skewed []string `json:"skewed,omitempty"`
	// Records and ServerRecords count the merged recordings.
	Records       int `json:"records"`
	ServerRecords int `json:"server_records"`
}

// ErrShards is wrapped by the errors of shard directories that do not make one run:
// different scenarios, missing or duplicate shards, overlapping indices.
var ErrShards = errors.New("merge")

type shardDir struct {
	dir  string
	sc   scenario.Scenario
	key  string
	info run.ShardInfo
}

// Shards makes the shard directories of one sharded run into one run in out: the
// client records in global index order (client.jsonl), the server recordings
// concatenated in receive order (server.jsonl, when the shards had mocks), and the
// scenario (shard index and start time cleared). Then it computes the metrics,
// exports, HTML report and verdicts once, on out, with the code a single run's
// directory gets ([run.LoadMerged] and [run.Outcome.WriteReports]), and
// writes merge.json. The
// returned Outcome's Check gives the gate.
//
// Directories whose scenarios differ (other than in shard index, start time and
// source addresses), or
// that are not exactly shards 0..N-1 once each, are refused with the list (wrapping
// ErrShards), and so are two records with one global index.
func Shards(out string, dirs []string, opts Options) (*run.Outcome, *Report, error) {
	if len(dirs) == 0 {
		return nil, nil, fmt.Errorf("%w: no shard directories", ErrShards)
	}
	shards := make([]shardDir, 0, len(dirs))
	var errs []error
	for _, d := range dirs {
		s, err := readShardDir(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		shards = append(shards, s)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if err := checkShards(shards); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(shards, func(a, b shardDir) int { return a.info.Index - b.info.Index })
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("merge: %w", err)
	}
	rep := &Report{Shards: len(shards), MaxSkew: cmp.Or(opts.MaxSkew, DefaultMaxSkew)}
	interrupted := false
	for _, s := range shards {
		rep.Dirs = append(rep.Dirs, s.dir)
		rep.Info = append(rep.Info, s.info)
		if sk := s.info.Skew(); sk > rep.MaxSkew {
			rep.Skewed = append(rep.Skewed, fmt.Sprintf("shard %d (%s): started up to %v from T0 (late %v, clock-offset error ≤ %v); bound %v", s.info.Index, s.dir, sk, s.info.StartLate, s.info.RTT/2, rep.MaxSkew))
		}
		if s.info.RegisteredLate {
			rep.Skewed = append(rep.Skewed, fmt.Sprintf("shard %d (%s): registered after the barrier had fixed T0", s.info.Index, s.dir))
		}
		if _, err := os.Stat(filepath.Join(s.dir, reportgen.ManifestFile)); errors.Is(err, fs.ErrNotExist) {
			interrupted = true
		}
	}
	n, err := mergeClient(out, shards)
	if err != nil {
		return nil, nil, err
	}
	rep.Records = n
	if rep.ServerRecords, err = mergeServer(out, shards); err != nil {
		return nil, nil, err
	}
	sc := shards[0].sc
	sc.ShardIndex, sc.StartAt, sc.SourceAddrs = 0, time.Time{}, nil
	if opts.Adjust != nil {
		if err := opts.Adjust(&sc); err != nil {
			return nil, nil, err
		}
	}
	if err := reportgen.WriteFileAtomic(filepath.Join(out, run.ScenarioFile), func(w io.Writer) error { return reportgen.WriteJSON(w, sc) }); err != nil {
		return nil, nil, fmt.Errorf("merge: %w", err)
	}
	sds := make([]run.ShardDir, len(shards))
	for i, s := range shards {
		sds[i] = run.ShardDir{Index: s.info.Index, Dir: s.dir}
	}
	o, err := run.LoadMerged(out, sds)
	if err != nil {
		return nil, nil, err
	}
	o.Interrupted = interrupted || o.Truncated
	if err := o.WriteReports(opts.Command...); err != nil {
		return o, rep, err
	}
	if err := reportgen.WriteFileAtomic(filepath.Join(out, run.MergeFile), func(w io.Writer) error { return reportgen.WriteJSON(w, rep) }); err != nil {
		return o, rep, fmt.Errorf("merge: %w", err)
	}
	o.Files = append(o.Files, filepath.Join(out, run.MergeFile))
	return o, rep, nil
}

func readShardDir(dir string) (shardDir, error) {
	s := shardDir{dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, run.ScenarioFile))
	if err != nil {
		return s, fmt.Errorf("%w: %s: %w", ErrShards, dir, err)
	}
	if err := json.Unmarshal(b, &s.sc); err != nil {
		return s, fmt.Errorf("%w: %s: %s: %w", ErrShards, dir, run.ScenarioFile, err)
	}
	if _, err := os.Stat(filepath.Join(dir, run.ClientFile)); err != nil {
		return s, fmt.Errorf("%w: %s: %w", ErrShards, dir, err)
	}
	s.info = run.ShardInfo{Index: s.sc.ShardIndex, Shards: max(s.sc.Shards, 1)}
	if b, err := os.ReadFile(filepath.Join(dir, run.ShardFile)); err == nil {
		if err := json.Unmarshal(b, &s.info); err != nil {
			return s, fmt.Errorf("%w: %s: %s: %w", ErrShards, dir, run.ShardFile, err)
		}
	}
	// What may differ between the shards of one run: the index, the start time on the
	// shard's clock, and the local addresses it dials from (a host's own).
	k := s.sc
	k.ShardIndex, k.StartAt, k.SourceAddrs = 0, time.Time{}, nil
	kb, err := json.Marshal(k)
	if err != nil {
		return s, fmt.Errorf("%w: %s: %w", ErrShards, dir, err)
	}
	s.key = string(kb)
	return s, nil
}

// checkShards refuses directories that are not the shards 0..N-1 of one scenario.
func checkShards(shards []shardDir) error {
	var errs []error
	ref := shards[0]
	var differ []string
	for _, s := range shards[1:] {
		if s.key != ref.key {
			differ = append(differ, s.dir)
		}
	}
	if len(differ) > 0 {
		errs = append(errs, fmt.Errorf("%w: not one scenario: %s differ from %s (%s)", ErrShards, strings.Join(differ, ", "), ref.dir, firstDiff(ref.key, shards, differ)))
	}
	n := ref.info.Shards
	seen := map[int][]string{}
	for _, s := range shards {
		seen[s.info.Index] = append(seen[s.info.Index], s.dir)
	}
	var missing, dup []string
	for i := range n {
		switch len(seen[i]) {
		case 0:
			missing = append(missing, fmt.Sprint(i))
		case 1:
		default:
			dup = append(dup, fmt.Sprintf("%d (%s)", i, strings.Join(seen[i], ", ")))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d shards, missing shard(s) %s", ErrShards, n, strings.Join(missing, ", ")))
	}
	if len(dup) > 0 {
		errs = append(errs, fmt.Errorf("%w: duplicate shard(s) %s", ErrShards, strings.Join(dup, "; ")))
	}
	for i, d := range seen {
		if i < 0 || i >= n {
			errs = append(errs, fmt.Errorf("%w: %s: shard index %d outside 0..%d", ErrShards, strings.Join(d, ", "), i, n-1))
		}
	}
	return errors.Join(errs...)
}

// firstDiff names the first top-level scenario field that differs.
func firstDiff(ref string, shards []shardDir, differ []string) string {
	var a map[string]json.RawMessage
	_ = json.Unmarshal([]byte(ref), &a)
	for _, s := range shards {
		if s.dir != differ[0] {
			continue
		}
		var b map[string]json.RawMessage
		_ = json.Unmarshal([]byte(s.key), &b)
		var keys []string
		for k := range a {
			keys = append(keys, k)
		}
		for k := range b {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			if !bytes.Equal(a[k], b[k]) {
				return fmt.Sprintf("first difference in %q: %s vs %s", k, a[k], b[k])
			}
		}
	}
	return "scenario.json differs"
}

// mergeClient writes the shards' client records into out/client.jsonl in global
// index order, refusing two records with one index.
func mergeClient(out string, shards []shardDir) (int, error) {
	return mergeLines(out, run.ClientFile, shards, true, func(b []byte, s shardDir, ln int) (float64, error) {
		var head struct {
			Index *int64 `json:"index"`
		}
		if err := json.Unmarshal(b, &head); err != nil || head.Index == nil {
			return 0, fmt.Errorf("%w: %s/%s:%d: not a client record", ErrShards, s.dir, run.ClientFile, ln)
		}
		if g := *head.Index; g%int64(s.info.Shards) != int64(s.info.Index) {
			return 0, fmt.Errorf("%w: %s/%s:%d: global index %d is not shard %d's (≡ %d mod %d)", ErrShards, s.dir, run.ClientFile, ln, g, s.info.Index, s.info.Index, s.info.Shards)
		}
		return float64(*head.Index), nil
	})
}

// mergeServer writes the shards' mock recordings into out/server.jsonl in receive
// order (0 records and no file when no shard has one).
func mergeServer(out string, shards []shardDir) (int, error) {
	return mergeLines(out, run.ServerFile, shards, false, func(b []byte, s shardDir, ln int) (float64, error) {
		var head struct {
			TS *float64 `json:"ts"`
		}
		if err := json.Unmarshal(b, &head); err != nil || head.TS == nil {
			return 0, fmt.Errorf("%w: %s/%s:%d: not a server record", ErrShards, s.dir, run.ServerFile, ln)
		}
		return *head.TS, nil
	})
}

// mergeLines writes the lines of the shards' files called name into out/name, ordered
// by key (stable). It holds 24 bytes per line (key, file, offset, length), not the
// records: a first pass reads each line's key, a second copies the lines in order, so
// the merge needs no more memory than Load then needs for the merged directory. With
// client set, every shard must have the file and two equal keys are refused; otherwise
// a missing file is no lines. A last line without its newline (a killed shard) is left
// out.
func mergeLines(out, name string, shards []shardDir, client bool, key func(b []byte, s shardDir, ln int) (float64, error)) (int, error) {
	type line struct {
		key     float64
		off     int64
		n, file int32
	}
	var lines []line
	files := make([]*os.File, len(shards))
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	any := false
	for fi, s := range shards {
		f, err := os.Open(filepath.Join(s.dir, name))
		if !client && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("merge: %w", err)
		}
		files[fi], any = f, true
		err = record.EachLineAt(f, func(ln int, off int64, b []byte) error {
			if b[len(b)-1] != '\n' || len(bytes.TrimSpace(b)) == 0 {
				return nil // blank, or a last line without its newline, cut short by a kill
			}
			k, err := key(b, s, ln)
			if err != nil {
				return err
			}
			lines = append(lines, line{key: k, off: off, n: int32(len(b)), file: int32(fi)})
			return nil
		})
		if err != nil {
			if errors.Is(err, ErrShards) {
				return 0, err
			}
			return 0, fmt.Errorf("merge: %s: %w", s.dir, err)
		}
	}
	if !any {
		return 0, nil
	}
	slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(a.key, b.key) })
	if client {
		for i := 1; i < len(lines); i++ {
			if lines[i].key == lines[i-1].key {
				return 0, fmt.Errorf("%w: two records with global index %d (%s and %s)", ErrShards, int64(lines[i].key), shards[lines[i-1].file].dir, shards[lines[i].file].dir)
			}
		}
	}
	err := reportgen.WriteFileAtomic(filepath.Join(out, name), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var buf []byte
		for _, l := range lines {
			buf = slices.Grow(buf[:0], int(l.n))[:l.n]
			if _, err := files[l.file].ReadAt(buf, l.off); err != nil {
				return err
			}
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return 0, fmt.Errorf("merge: %w", err)
	}
	return len(lines), nil
}
