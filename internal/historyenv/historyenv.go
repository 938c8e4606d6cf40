// Package historyenv names PERFGATE_HISTORY once, for history and for perftest. Both
// read it (history and through it the CLI; perftest.Run), and perftest must not import
// history, which would link SQLite and pgx into every test binary.
package historyenv

// Name is the environment variable that names a history database: a SQLite file or a
// "postgres://" URL.
const Name = "PERFGATE_HISTORY"
