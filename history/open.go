package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL, driver "pgx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/perfgate/perfgate/internal/historyenv"
)

// EnvHistory names the environment variable that gives a history database to
// `perfgate profile` and to perftest runs when no flag or option does
// (perftest.EnvHistory is the same constant).
const EnvHistory = historyenv.Name

// IsPostgres reports whether addr names a PostgreSQL database ("postgres://…" or
// "postgresql://…") rather than a SQLite file.
func IsPostgres(addr string) bool {
	return strings.HasPrefix(addr, "postgres://") || strings.HasPrefix(addr, "postgresql://")
}

// Redact returns addr safe to print or store: a PostgreSQL URL's password is replaced
// by "xxxxx" (in the user info and in a password= parameter); a file path is unchanged.
func Redact(addr string) string {
	if !IsPostgres(addr) {
		return addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "postgres://(unparsable address)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// secrets returns the password(s) in addr, to scrub them from driver errors.
func secrets(addr string) []string {
	if !IsPostgres(addr) {
		return nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return []string{addr}
	}
	var out []string
	if p, ok := u.User.Password(); ok && p != "" {
		out = append(out, p, url.UserPassword("", p).String()[1:])
	}
	if p := u.Query().Get("password"); p != "" {
		out = append(out, p)
	}
	return out
}

// Open opens the history at addr, creating it if needed, and migrates its schema to
// [SchemaVersion]. addr is a "postgres://" URL or a SQLite file path (an optional
// "sqlite:" prefix is dropped; the file's directory is created).
func Open(ctx context.Context, addr string) (Store, error) {
	return openVersion(ctx, addr, SchemaVersion)
}

// openVersion opens addr and migrates it to version (tests make old databases).
func openVersion(ctx context.Context, addr string, version int) (Store, error) {
	if addr == "" {
		return nil, errors.New("history: no database given (a file path or a postgres:// URL)")
	}
	s := &sqlStore{addr: Redact(addr)}
	secret := secrets(addr)
	s.wrap = func(err error) error {
		if err == nil {
			return nil
		}
		msg := err.Error()
		for _, p := range secret {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
		if msg != err.Error() {
			err = errors.New(msg) // the driver's error named the password: keep only the text
		}
		return fmt.Errorf("history %s: %w", s.addr, err)
	}
	var err error
	if IsPostgres(addr) {
		s.d = postgresDialect()
		s.db, err = sql.Open("pgx", addr)
		if err == nil {
			s.db.SetMaxOpenConns(4)
		}
	} else {
		path := strings.TrimPrefix(addr, "sqlite:")
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("history: %w", err)
			}
		}
		s.d = sqliteDialect()
		// WAL lets readers read while a writer writes; busy_timeout makes concurrent
		// writers (parallel CI jobs on one file) wait for each other; _txlock=immediate
		// takes the write lock at BEGIN, so two writers never deadlock upgrading.
		s.db, err = sql.Open("sqlite", path+"?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate")
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// SQLite switches a new file to WAL as each connection opens; connections
	// opening at once can find it busy without waiting on busy_timeout.
	if err := s.retrying(pingCtx, func() error { return s.db.PingContext(pingCtx) }); err != nil {
		s.db.Close()
		return nil, s.wrap(fmt.Errorf("connect: %w", err))
	}
	if err := migrate(ctx, s, version); err != nil {
		s.db.Close()
		return nil, s.wrap(err)
	}
	return s, nil
}

// placeholder matches a "?" placeholder outside quotes (the queries here have no "?"
// in literals).
var placeholder = regexp.MustCompile(`\?`)

func postgresDialect() dialect {
	return dialect{
		name: "postgres",
		rebind: func(q string) string {
			n := 0
			return placeholder.ReplaceAllStringFunc(q, func(string) string { n++; return "$" + strconv.Itoa(n) })
		},
		ddl: strings.NewReplacer("{{id}}", "BIGSERIAL PRIMARY KEY", "{{float}}", "DOUBLE PRECISION").Replace,
		lock: func(ctx context.Context, tx *sql.Tx) error {
			// One migrator at a time across every CI job sharing the database.
			_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7092584312)`)
			return err
		},
		retry: func(err error) bool {
			var pe *pgconn.PgError
			// serialization failure, deadlock: retry the transaction.
			return errors.As(err, &pe) && slices.Contains([]string{"40001", "40P01"}, pe.Code)
		},
	}
}

func sqliteDialect() dialect {
	return dialect{
		name:   "sqlite",
		rebind: func(q string) string { return q },
		ddl:    strings.NewReplacer("{{id}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{float}}", "REAL").Replace,
		lock:   func(context.Context, *sql.Tx) error { return nil },
		retry: func(err error) bool {
			var se *sqlite.Error
			if errors.As(err, &se) {
				c := se.Code() & 0xff
				return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
			}
			return false
		},
	}
}
