package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/internal/testutil/pgtest"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv("HISTORY_CRASH_ADDR"); addr != "" {
		os.Exit(crashWriter(addr))
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// backend is one of the two stores under the same tests.
type backend struct {
	name string
	addr func(t *testing.T) string
}

var backends = []backend{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "history.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Shared(t).NewDatabase(t) }},
}

// eachBackend runs f against a new, empty database of each backend.
func eachBackend(t *testing.T, f func(t *testing.T, addr string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.addr(t)) })
	}
}

func open(t *testing.T, addr string) Store {
	t.Helper()
	s, err := Open(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// sample returns a result of scenario sc, i-th in its series, with k runs.
func sample(sc string, i, k int) *Result {
	r := &Result{
		Fingerprint: "fp-" + sc, Scenario: sc,
		Commit: fmt.Sprintf("%040x", i+1), Branch: "main", Build: "build-" + strconv.Itoa(i),
		Version: "devel", Host: "ci-1 (2 CPUs)", Topology: "1 url",
		Created: t0.Add(time.Duration(i) * time.Hour), Artifacts: fmt.Sprintf("/artifacts/%s/%d", sc, i),
		Verdicts: []Verdict{{Check: "quantile", Pass: true, Summary: "ttft p99 120 ms ≤ 250 ms", Value: 120, Unit: "ms"},
			{Check: "regression", Pass: false, Status: "inconclusive", Summary: "cannot tell"}},
	}
	for run := range k {
		r.Runs = append(r.Runs, Run{Run: run, Stats: map[string]float64{"ttft_p50": 100 + float64(i) + float64(run)/10, "output_tps": 900.5 - float64(run)}})
	}
	return r
}

func TestStoreRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, addr string) {
		ctx := t.Context()
		s := open(t, addr)
		var want []Result
		for i := range 5 {
			r := sample("chat", i, 3)
			added, err := s.Add(ctx, r)
			if err != nil || !added || r.ID == 0 {
				t.Fatalf("Add #%d: added %v, id %d, err %v", i, added, r.ID, err)
			}
			want = append(want, *r)
		}
		other := sample("embed", 0, 1)
		other.Branch = "feature"
		if _, err := s.Add(ctx, other); err != nil {
			t.Fatal(err)
		}
		got, err := s.Results(ctx, Query{Series: &SeriesKey{"fp-chat", "chat"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("series chat: %d results, want 5", len(got))
		}
		for i := range got {
			w := want[i]
			w.Recorded = w.Recorded.Truncate(time.Nanosecond)
			if !reflect.DeepEqual(got[i], w) {
				t.Errorf("result %d read back differs:\n got %+v\nwant %+v", i, got[i], w)
			}
		}
		// The same result again (a retried CI step) is not added twice.
		dup := sample("chat", 2, 3)
		added, err := s.Add(ctx, dup)
		if err != nil || added || dup.ID != want[2].ID {
			t.Errorf("re-adding result 2: added %v, id %d (stored %d), err %v", added, dup.ID, want[2].ID, err)
		}
		last, err := s.Results(ctx, Query{Scenario: "chat", Last: 2})
		if err != nil || len(last) != 2 || last[0].ID != want[3].ID || last[1].ID != want[4].ID {
			t.Errorf("Last 2: %v %v", ids(last), err)
		}
		if b, _ := s.Results(ctx, Query{Branch: "feature"}); len(b) != 1 || b[0].Scenario != "embed" {
			t.Errorf("branch feature: %v", ids(b))
		}
		g, err := s.Get(ctx, want[1].ID)
		if err != nil || g.Commit != want[1].Commit || len(g.Runs) != 3 {
			t.Errorf("Get: %+v %v", g, err)
		}
		if _, err := s.Get(ctx, 99999); err == nil || !strings.Contains(err.Error(), "no such result") {
			t.Errorf("Get of a missing ID: %v", err)
		}
		series, err := s.Series(ctx)
		if err != nil || len(series) != 2 || series[0].Scenario != "chat" || series[0].Results != 5 || series[0].LastCommit != want[4].Commit {
			t.Errorf("Series: %+v %v", series, err)
		}
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
			t.Errorf("Version = %d, %v; want %d", v, err, SchemaVersion)
		}
		st := State{N: 5, LastID: 7, Weak: []int{2, 3}}
		if err := s.PutState(ctx, SeriesKey{"fp-chat", "chat"}, "ttft_p50", st); err != nil {
			t.Fatal(err)
		}
		st.N = 6
		if err := s.PutState(ctx, SeriesKey{"fp-chat", "chat"}, "ttft_p50", st); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.State(ctx, SeriesKey{"fp-chat", "chat"}, "ttft_p50"); err != nil || !ok || !reflect.DeepEqual(got, st) {
			t.Errorf("State = %+v %v %v; want %+v", got, ok, err, st)
		}
		if _, ok, err := s.State(ctx, SeriesKey{"fp-chat", "chat"}, "itl_p50"); ok || err != nil {
			t.Errorf("State of an unsaved metric: ok %v, err %v", ok, err)
		}
	})
}

func ids(rs []Result) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestAddRefusesIncompleteResult(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "h.db"))
	for _, tc := range []struct {
		edit func(*Result)
		want string
	}{
		{func(r *Result) { r.Fingerprint = "" }, "no workload fingerprint"},
		{func(r *Result) { r.Scenario = "" }, "no scenario name"},
		{func(r *Result) { r.Runs = nil }, "has no runs"},
		{func(r *Result) { r.Created = time.Time{} }, "no start time"},
		{func(r *Result) { r.Runs[0].Stats = map[string]float64{} }, `result "chat" run 0: no statistics`},
		{func(r *Result) { r.Runs[0].Stats["ttft_p50"] = -1 }, `result "chat" run 0: ttft_p50: -1: want a number >= 0`},
		{func(r *Result) { r.Runs[0].Stats["ttft_p50"] = math.NaN() }, `result "chat" run 0: ttft_p50: NaN: want a finite number`},
		{func(r *Result) { r.Runs[0].Stats["output_tps"] = math.Inf(1) }, `result "chat" run 0: output_tps: +Inf: want a finite number`},
		{func(r *Result) { r.Runs[0].Stats["output_tps"] = 1e308 }, `result "chat" run 0: output_tps: 1e+308: want at most 1e+12`},
		{func(r *Result) { r.Runs[0].Stats["goodput_fraction"] = 1.5 }, `result "chat" run 0: goodput_fraction: 1.5: want a fraction from 0 to 1`},
	} {
		r := sample("chat", 0, 1)
		tc.edit(r)
		if _, err := s.Add(t.Context(), r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add: err %v, want %q", err, tc.want)
		}
	}
	if rs, _ := s.Results(t.Context(), Query{}); len(rs) != 0 {
		t.Errorf("%d results stored", len(rs))
	}
}

// rawDB opens the store's database directly, for tests that make old or odd databases.
func rawDB(t *testing.T, s Store) *sql.DB { return s.(*sqlStore).db }

func TestMigrateOldDatabase(t *testing.T) {
	eachBackend(t, func(t *testing.T, addr string) {
		ctx := t.Context()
		old, err := openVersion(ctx, addr, 1)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := old.Version(ctx); v != 1 {
			t.Fatalf("old database at version %d", v)
		}
		// A version-1 perfgate wrote these rows: no build, no topology, no state table.
		db := rawDB(t, old)
		q := old.(*sqlStore).q
		if _, err := db.ExecContext(ctx, q(`INSERT INTO results (result_key, fingerprint, scenario, commit_sha, branch, perfgate_version, host, artifacts, created_ns, recorded_ns)
			VALUES ('k1', 'fp', 'chat', 'abc', 'main', 'v0.1.0', 'ci', '/a', ?, ?)`), t0.UnixNano(), t0.UnixNano()); err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := db.QueryRowContext(ctx, `SELECT id FROM results WHERE result_key = 'k1'`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, q(`INSERT INTO run_stats VALUES (?, 0, 'ttft_p50', 101.5), (?, 1, 'ttft_p50', 99.5)`), id, id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `SELECT build FROM results`); err == nil {
			t.Fatal("a version-1 database has a build column: the test does not make an old database")
		}
		old.Close()

		s := open(t, addr)
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
			t.Fatalf("after Open: version %d, %v; want %d", v, err, SchemaVersion)
		}
		rs, err := s.Results(ctx, Query{})
		if err != nil || len(rs) != 1 {
			t.Fatalf("old results: %v %v", rs, err)
		}
		if r := rs[0]; r.Commit != "abc" || r.Build != "" || len(r.Runs) != 2 || r.Runs[1].Stats["ttft_p50"] != 99.5 {
			t.Errorf("old result read back as %+v", r)
		}
		n := sample("chat", 1, 1)
		n.Fingerprint = "fp"
		if _, err := s.Add(ctx, n); err != nil {
			t.Fatalf("adding to a migrated database: %v", err)
		}
		if rs, _ := s.Results(ctx, Query{}); len(rs) != 2 || rs[1].Build != n.Build {
			t.Errorf("after adding: %+v", rs)
		}
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, addr string) {
		s := open(t, addr)
		if _, err := rawDB(t, s).ExecContext(t.Context(), `INSERT INTO perfgate_schema (version, applied_ns, what) VALUES (99, 0, 'future')`); err != nil {
			t.Fatal(err)
		}
		_, err := Open(t.Context(), addr)
		if err == nil || !strings.Contains(err.Error(), "schema is version 99, newer than this perfgate's") {
			t.Errorf("Open of a newer database: %v", err)
		}
	})
}

// crashWriter is the child of TestCrashMidWrite: it adds results and dies (exit 3,
// no rollback, no commit) inside the fifth one's transaction.
func crashWriter(addr string) int {
	s, err := Open(context.Background(), addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n := 0
	crashHook = func() {
		n++
		if n == 5 {
			os.Exit(3)
		}
	}
	for i := range 10 {
		if _, err := s.Add(context.Background(), sample("chat", i, 4)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestCrashMidWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, addr string) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "HISTORY_CRASH_ADDR="+addr)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Fatalf("crash writer: %v, want exit 3: %s", err, out)
		}
		s := open(t, addr)
		rs, err := s.Results(t.Context(), Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 4 {
			t.Fatalf("after a crash in the fifth write: %d results, want the 4 complete ones", len(rs))
		}
		for _, r := range rs {
			if len(r.Runs) != 4 || len(r.Verdicts) != 2 {
				t.Errorf("result %d is partial: %d runs, %d verdicts", r.ID, len(r.Runs), len(r.Verdicts))
			}
		}
		// The history goes on after the crash.
		if _, err := s.Add(t.Context(), sample("chat", 4, 4)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConcurrentWriters is the load test: 8 writers (parallel CI jobs, each with its
// own connection) add 1,000 results each, and also re-add results another writer adds.
// None is lost, none is stored twice, none is partial.
func TestConcurrentWriters(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	const writers, each = 8, 1000
	eachBackend(t, func(t *testing.T, addr string) {
		ctx := t.Context()
		open(t, addr) // create the schema once, so the writers race on data, not DDL
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				s, err := Open(ctx, addr)
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				sc := fmt.Sprintf("w%d", w)
				for i := range each {
					r := sample(sc, i, 1)
					if _, err := s.Add(ctx, r); err != nil {
						errs <- err
						return
					}
					if i%50 == 0 { // a retried job: writer 0's i-th result again
						if _, err := s.Add(ctx, sample("w0", i, 1)); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		s := open(t, addr)
		rs, err := s.Results(ctx, Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != writers*each {
			t.Errorf("%d results stored, want %d", len(rs), writers*each)
		}
		seen := map[string]bool{}
		for _, r := range rs {
			if seen[r.Key] {
				t.Errorf("result %s stored twice", r.Key)
			}
			seen[r.Key] = true
			if len(r.Runs) != 1 || len(r.Verdicts) != 2 {
				t.Errorf("result %d is partial", r.ID)
			}
		}
		for _, si := range mustSeries(t, s) {
			if si.Results != each {
				t.Errorf("series %s: %d results, want %d", si.Scenario, si.Results, each)
			}
		}
	})
}

func mustSeries(t *testing.T, s Store) []SeriesInfo {
	t.Helper()
	si, err := s.Series(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return si
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://perf:s3cret@db.example:5432/hist?sslmode=require": "postgres://perf:xxxxx@db.example:5432/hist?sslmode=require",
		"postgresql://perf@db/hist?password=s3cret":                   "postgresql://perf@db/hist?password=xxxxx",
		"/var/lib/perfgate/history.db":                                "/var/lib/perfgate/history.db",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPasswordNeverInErrors connects with a wrong password: the error names the
// database, not the password.
func TestPasswordNeverInErrors(t *testing.T) {
	c := pgtest.Shared(t)
	good := c.NewDatabase(t)
	name := good[strings.LastIndex(good, "/")+1 : strings.Index(good, "?")]
	bad := c.URL(name, "Wrong-Pass-98765")
	_, err := Open(t.Context(), bad)
	if err == nil {
		t.Fatal("Open with a wrong password succeeded: the cluster does not check passwords")
	}
	if strings.Contains(err.Error(), "Wrong-Pass-98765") {
		t.Errorf("the error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "postgres:xxxxx@127.0.0.1") {
		t.Errorf("the error does not say which database: %v", err)
	}
	s := open(t, good)
	if _, err := s.Add(t.Context(), sample("chat", 0, 1)); err != nil {
		t.Fatal(err)
	}
}

// A connection SQLite refuses as busy (as one switching a new file to WAL can be,
// without waiting on busy_timeout) is tried again; any other error, or the
// context's end, stops at once.
func TestRetryingTransientConflicts(t *testing.T) {
	// A real SQLITE_BUSY: a second writer on a file whose write lock is held, with no busy_timeout.
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, busy := other.Begin()
	if busy == nil || !sqliteDialect().retry(busy) {
		t.Fatalf("a second writer got %v, want a busy error the sqlite dialect retries", busy)
	}
	if sqliteDialect().retry(errors.New("no such table: x")) {
		t.Error("the sqlite dialect retries an error that is not a conflict")
	}

	s := &sqlStore{d: sqliteDialect()}
	calls := 0
	err = s.retrying(t.Context(), func() error {
		if calls++; calls == 3 {
			tx.Rollback() // the holder lets go
		}
		_, err := other.Begin()
		return err
	})
	if err != nil || calls < 3 {
		t.Errorf("retrying returned %v after %d calls, want success once the lock is free (call 3)", err, calls)
	}

	calls = 0
	fatal := errors.New("no such table: x")
	if err := s.retrying(t.Context(), func() error { calls++; return fatal }); err != fatal || calls != 1 {
		t.Errorf("a lasting error: %v after %d calls, want it returned after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls = 0
	if err := s.retrying(ctx, func() error { calls++; cancel(); return busy }); err != busy || calls != 1 {
		t.Errorf("a conflict after the context ended: %v after %d calls, want it returned after 1", err, calls)
	}
}

// Parallel CI jobs that find an empty database create its schema once: every Open
// succeeds, and the version is the latest.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, addr string) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				s, err := Open(t.Context(), addr)
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				if _, err := s.Add(t.Context(), sample("race", i, 1)); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		s := open(t, addr)
		var n int
		if err := rawDB(t, s).QueryRowContext(t.Context(), `SELECT COUNT(*) FROM perfgate_schema`).Scan(&n); err != nil || n != SchemaVersion {
			t.Errorf("perfgate_schema has %d rows (%v), want one per migration (%d)", n, err, SchemaVersion)
		}
	})
}
