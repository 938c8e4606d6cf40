// Package historyhook connects perftest.Run to perftest/perfhistory when a test binary
// links it. perftest itself then imports no history and no database driver, and
// exports no plumbing for it.
package historyhook

import (
	"context"

	"github.com/perfgate/perfgate/perftest/run"
)

// Record records one finished run's outcome in the history at addr (a SQLite file or
// a "postgres://" URL) and returns addr as it may be printed, its secrets redacted.
// perfhistory sets it when it is linked (in its init); nil otherwise. Not safe to set
// concurrently with perftest.Run.
var Record func(ctx context.Context, out *run.Outcome, addr string) (shown string, err error)
