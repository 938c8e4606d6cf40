package history

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A migration takes the schema from Version-1 to Version. Migrations are never edited
// once released: a change is a new migration.
type migration struct {
	Version int
	What    string
	Stmts   []string
}

// migrations are the schema's history. {{id}} and {{float}} are the backend's
// identity column and double type.
var migrations = []migration{
	{1, "results, each run's statistics, verdicts", []string{
		`CREATE TABLE results (
			id {{id}},
			result_key TEXT NOT NULL UNIQUE,
			fingerprint TEXT NOT NULL,
			scenario TEXT NOT NULL,
			commit_sha TEXT NOT NULL DEFAULT '',
			branch TEXT NOT NULL DEFAULT '',
			perfgate_version TEXT NOT NULL DEFAULT '',
			host TEXT NOT NULL DEFAULT '',
			artifacts TEXT NOT NULL DEFAULT '',
			created_ns BIGINT NOT NULL,
			recorded_ns BIGINT NOT NULL)`,
		`CREATE INDEX results_series ON results (fingerprint, scenario, created_ns)`,
		`CREATE TABLE run_stats (
			result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
			run INTEGER NOT NULL,
			metric TEXT NOT NULL,
			value {{float}} NOT NULL,
			PRIMARY KEY (result_id, run, metric))`,
		`CREATE TABLE verdicts (
			result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
			seq INTEGER NOT NULL,
			check_name TEXT NOT NULL,
			pass INTEGER NOT NULL,
			status TEXT NOT NULL DEFAULT '',
			summary TEXT NOT NULL,
			value {{float}} NOT NULL DEFAULT 0,
			unit TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (result_id, seq))`,
	}},
	{2, "the build and topology of a result; the change-point detector's state per series and metric", []string{
		`ALTER TABLE results ADD COLUMN build TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE results ADD COLUMN topology TEXT NOT NULL DEFAULT ''`,
		`CREATE INDEX results_branch ON results (branch, created_ns)`,
		`CREATE TABLE change_state (
			fingerprint TEXT NOT NULL,
			scenario TEXT NOT NULL,
			metric TEXT NOT NULL,
			state TEXT NOT NULL,
			PRIMARY KEY (fingerprint, scenario, metric))`,
	}},
	{3, "the scenario as run, so a regression gate can take its baseline from the history", []string{
		`ALTER TABLE results ADD COLUMN scenario_json TEXT NOT NULL DEFAULT ''`,
	}},
}

// SchemaVersion is the schema version this perfgate creates and reads.
var SchemaVersion = migrations[len(migrations)-1].Version

// schemaVersion reads the database's version (0 = empty database).
func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(version) FROM perfgate_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}

// migrate brings the database to version in one transaction, under the backend's
// migration lock: concurrent perfgate processes on a new database create it once.
func migrate(ctx context.Context, s *sqlStore, version int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.d.lock(ctx, tx); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS perfgate_schema (version INTEGER PRIMARY KEY, applied_ns BIGINT NOT NULL, what TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("create schema table: %w", err)
		}
		have, err := schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if have > SchemaVersion {
			return fmt.Errorf("the database's schema is version %d, newer than this perfgate's (%d): use a newer perfgate", have, SchemaVersion)
		}
		for _, m := range migrations {
			if m.Version <= have || m.Version > version {
				continue
			}
			for _, stmt := range m.Stmts {
				if _, err := tx.ExecContext(ctx, s.d.ddl(stmt)); err != nil {
					return fmt.Errorf("migration %d (%s): %w", m.Version, m.What, err)
				}
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO perfgate_schema (version, applied_ns, what) VALUES (?, ?, ?)`), m.Version, time.Now().UnixNano(), m.What); err != nil {
				return fmt.Errorf("migration %d: %w", m.Version, err)
			}
		}
		return nil
	})
}
