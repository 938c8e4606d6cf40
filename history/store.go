package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Store keeps results. Both backends ([Open]: SQLite and PostgreSQL) implement it, and
// one test suite runs against each.
type Store interface {
	// Add records r in one transaction and sets r.ID (and r.Key, r.Recorded when
	// empty). A result whose Key is already stored is not added again: added is false
	// and r.ID is the stored one's.
	Add(ctx context.Context, r *Result) (added bool, err error)
	// Results returns the results q selects, oldest first (by start time, then ID).
	Results(ctx context.Context, q Query) ([]Result, error)
	// Get returns the result with the given ID.
	Get(ctx context.Context, id int64) (Result, error)
	// Series lists the series in the store.
	Series(ctx context.Context) ([]SeriesInfo, error)
	// State returns the change-point detector's saved state for a series' metric
	// (ok = false when none is saved); PutState saves it.
	State(ctx context.Context, k SeriesKey, metric string) (s State, ok bool, err error)
	PutState(ctx context.Context, k SeriesKey, metric string, s State) error
	// Version is the schema version of the database.
	Version(ctx context.Context) (int, error)
	// Close releases the connection.
	Close() error
}

// Query selects results. The zero Query selects all.
type Query struct {
	// Series keeps one series; Scenario (when Series is nil) keeps every series of that name.
	Series   *SeriesKey
	Scenario string
	// Branch keeps the results of one branch of the server under test.
	Branch string
	// Last keeps the newest N results (0 = all).
	Last int
}

// SeriesInfo describes one series of a store.
type SeriesInfo struct {
	SeriesKey
	Results    int       `json:"results"`
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
	LastCommit string    `json:"last_commit,omitempty"`
}

// ErrNotFound is returned by [Store.Get] for an ID the store does not hold.
var ErrNotFound = errors.New("history: no such result")

// dialect holds what differs between the two SQL backends.
type dialect struct {
	name string
	// rebind turns "?" placeholders into the backend's.
	rebind func(string) string
	// ddl turns a migration's statement into the backend's (types, identity columns).
	ddl func(string) string
	// lock takes the migration lock inside tx (PostgreSQL: an advisory lock; SQLite's
	// write transactions are exclusive already).
	lock func(ctx context.Context, tx *sql.Tx) error
	// retry reports whether err is a transient conflict worth retrying (SQLite's busy).
	retry func(err error) bool
}

// sqlStore is the Store over database/sql, shared by both backends.
type sqlStore struct {
	db   *sql.DB
	d    dialect
	addr string // redacted
	// wrap makes a driver error safe to print (no password) and says where.
	wrap func(err error) error
}

// crashHook, when set (by tests), is called inside Add's transaction after the
// result's row is written and before its runs are, to simulate a crash mid-write.
var crashHook func()

func (s *sqlStore) q(query string) string { return s.d.rebind(query) }

// inTx runs fn in a transaction, retrying transient conflicts.
func (s *sqlStore) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.retrying(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// retrying calls f until it succeeds, fails for good, or ctx ends: up to 50 tries
// for a transient conflict (the dialect's retry), backing off 5 ms more each time.
func (s *sqlStore) retrying(ctx context.Context, f func() error) error {
	var err error
	for attempt := range 50 {
		if err = f(); err == nil || ctx.Err() != nil || !s.d.retry(err) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
	}
	return err
}

func (s *sqlStore) Add(ctx context.Context, r *Result) (bool, error) {
	if err := r.Validate(); err != nil {
		return false, err
	}
	if r.Key == "" {
		r.Key = r.ComputeKey()
	}
	if r.Recorded.IsZero() {
		r.Recorded = time.Now().UTC()
	}
	added := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		added = false
		var id int64
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO results
			(result_key, fingerprint, scenario, commit_sha, branch, build, perfgate_version, host, topology, artifacts, created_ns, recorded_ns, scenario_json)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (result_key) DO NOTHING RETURNING id`),
			r.Key, r.Fingerprint, r.Scenario, r.Commit, r.Branch, r.Build, r.Version, r.Host, r.Topology, r.Artifacts,
			r.Created.UnixNano(), r.Recorded.UnixNano(), string(r.Config)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return tx.QueryRowContext(ctx, s.q(`SELECT id FROM results WHERE result_key = ?`), r.Key).Scan(&r.ID)
		}
		if err != nil {
			return err
		}
		if crashHook != nil {
			crashHook()
		}
		if err := s.insertRows(ctx, tx, "run_stats (result_id, run, metric, value)", 4, runRows(id, r.Runs)); err != nil {
			return err
		}
		if err := s.insertRows(ctx, tx, "verdicts (result_id, seq, check_name, pass, status, summary, value, unit)", 8, verdictRows(id, r.Verdicts)); err != nil {
			return err
		}
		r.ID, added = id, true
		return nil
	})
	if err != nil {
		return false, s.wrap(fmt.Errorf("add result %q: %w", r.Scenario, err))
	}
	return added, nil
}

func runRows(id int64, runs []Run) [][]any {
	var rows [][]any
	for _, run := range runs {
		for _, m := range sortedKeys(run.Stats) {
			rows = append(rows, []any{id, run.Run, m, run.Stats[m]})
		}
	}
	return rows
}

func verdictRows(id int64, vs []Verdict) [][]any {
	var rows [][]any
	for i, v := range vs {
		pass := 0
		if v.Pass {
			pass = 1
		}
		rows = append(rows, []any{id, i, v.Check, pass, v.Status, v.Summary, v.Value, v.Unit})
	}
	return rows
}

// insertRows inserts rows into table (with its column list) in statements of up to
// 100 rows each: one round trip per hundred rows, not per row.
func (s *sqlStore) insertRows(ctx context.Context, tx *sql.Tx, table string, cols int, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), 100)
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " VALUES ")
		args := make([]any, 0, n*cols)
		for i, row := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")")
			args = append(args, row...)
		}
		if _, err := tx.ExecContext(ctx, s.q(b.String()), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

const resultColumns = `id, result_key, fingerprint, scenario, commit_sha, branch, build, perfgate_version, host, topology, artifacts, created_ns, recorded_ns, scenario_json`

func (s *sqlStore) Results(ctx context.Context, q Query) ([]Result, error) {
	var where []string
	var args []any
	if q.Series != nil {
		where = append(where, "fingerprint = ? AND scenario = ?")
		args = append(args, q.Series.Fingerprint, q.Series.Scenario)
	} else if q.Scenario != "" {
		where = append(where, "scenario = ?")
		args = append(args, q.Scenario)
	}
	if q.Branch != "" {
		where = append(where, "branch = ?")
		args = append(args, q.Branch)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	sel := `SELECT ` + resultColumns + ` FROM results` + cond
	if q.Last > 0 {
		sel = `SELECT * FROM (` + sel + ` ORDER BY created_ns DESC, id DESC LIMIT ?) newest`
		args = append(args, q.Last)
	}
	sel += ` ORDER BY created_ns, id`
	rs, err := s.load(ctx, sel, args)
	if err != nil {
		return nil, s.wrap(fmt.Errorf("read results: %w", err))
	}
	return rs, nil
}

func (s *sqlStore) Get(ctx context.Context, id int64) (Result, error) {
	rs, err := s.load(ctx, `SELECT `+resultColumns+` FROM results WHERE id = ?`, []any{id})
	if err != nil {
		return Result{}, s.wrap(fmt.Errorf("read result %d: %w", id, err))
	}
	if len(rs) == 0 {
		return Result{}, fmt.Errorf("%w: %d (perfgate history list shows the IDs)", ErrNotFound, id)
	}
	return rs[0], nil
}

// load reads the results sel selects, then their runs and verdicts, in one read
// transaction (a consistent snapshot while writers add results).
func (s *sqlStore) load(ctx context.Context, sel string, args []any) ([]Result, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.d.name == "postgres"})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, s.q(sel), args...)
	if err != nil {
		return nil, err
	}
	var out []Result
	index := map[int64]int{}
	for rows.Next() {
		var r Result
		var created, recorded int64
		var config string
		if err := rows.Scan(&r.ID, &r.Key, &r.Fingerprint, &r.Scenario, &r.Commit, &r.Branch, &r.Build, &r.Version, &r.Host, &r.Topology, &r.Artifacts, &created, &recorded, &config); err != nil {
			rows.Close()
			return nil, err
		}
		if config != "" {
			r.Config = json.RawMessage(config)
		}
		r.Created, r.Recorded = time.Unix(0, created).UTC(), time.Unix(0, recorded).UTC()
		index[r.ID] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	ids := "SELECT id FROM (" + sel + ") sel"
	stats, err := tx.QueryContext(ctx, s.q(`SELECT result_id, run, metric, value FROM run_stats WHERE result_id IN (`+ids+`) ORDER BY result_id, run`), args...)
	if err != nil {
		return nil, err
	}
	for stats.Next() {
		var id int64
		var run int
		var m string
		var v float64
		if err := stats.Scan(&id, &run, &m, &v); err != nil {
			stats.Close()
			return nil, err
		}
		i, ok := index[id]
		if !ok {
			continue
		}
		r := &out[i]
		if n := len(r.Runs); n == 0 || r.Runs[n-1].Run != run {
			r.Runs = append(r.Runs, Run{Run: run, Stats: map[string]float64{}})
		}
		r.Runs[len(r.Runs)-1].Stats[m] = v
	}
	stats.Close()
	if err := stats.Err(); err != nil {
		return nil, err
	}
	vs, err := tx.QueryContext(ctx, s.q(`SELECT result_id, check_name, pass, status, summary, value, unit FROM verdicts WHERE result_id IN (`+ids+`) ORDER BY result_id, seq`), args...)
	if err != nil {
		return nil, err
	}
	defer vs.Close()
	for vs.Next() {
		var id int64
		var v Verdict
		var pass int
		if err := vs.Scan(&id, &v.Check, &pass, &v.Status, &v.Summary, &v.Value, &v.Unit); err != nil {
			return nil, err
		}
		v.Pass = pass != 0
		if i, ok := index[id]; ok {
			out[i].Verdicts = append(out[i].Verdicts, v)
		}
	}
	return out, vs.Err()
}

func (s *sqlStore) Series(ctx context.Context) ([]SeriesInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, scenario, COUNT(*), MIN(created_ns), MAX(created_ns),
		(SELECT commit_sha FROM results r2 WHERE r2.fingerprint = r.fingerprint AND r2.scenario = r.scenario ORDER BY created_ns DESC, id DESC LIMIT 1)
		FROM results r GROUP BY fingerprint, scenario ORDER BY scenario, fingerprint`)
	if err != nil {
		return nil, s.wrap(fmt.Errorf("list series: %w", err))
	}
	defer rows.Close()
	var out []SeriesInfo
	for rows.Next() {
		var si SeriesInfo
		var first, last int64
		if err := rows.Scan(&si.Fingerprint, &si.Scenario, &si.Results, &first, &last, &si.LastCommit); err != nil {
			return nil, s.wrap(err)
		}
		si.First, si.Last = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		out = append(out, si)
	}
	return out, s.wrap(rows.Err())
}

func (s *sqlStore) State(ctx context.Context, k SeriesKey, metric string) (State, bool, error) {
	var text string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT state FROM change_state WHERE fingerprint = ? AND scenario = ? AND metric = ?`), k.Fingerprint, k.Scenario, metric).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, s.wrap(fmt.Errorf("read change-point state: %w", err))
	}
	var st State
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return State{}, false, nil // unreadable: recompute
	}
	return st, true, nil
}

func (s *sqlStore) PutState(ctx context.Context, k SeriesKey, metric string, st State) error {
	b, _ := json.Marshal(st)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO change_state (fingerprint, scenario, metric, state) VALUES (?, ?, ?, ?)
			ON CONFLICT (fingerprint, scenario, metric) DO UPDATE SET state = excluded.state`), k.Fingerprint, k.Scenario, metric, string(b))
		return err
	})
	if err != nil {
		return s.wrap(fmt.Errorf("save change-point state: %w", err))
	}
	return nil
}

func (s *sqlStore) Version(ctx context.Context) (int, error) {
	v, err := schemaVersion(ctx, s.db)
	return v, s.wrap(err)
}

func (s *sqlStore) Close() error { return s.db.Close() }
