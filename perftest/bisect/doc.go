// Package bisect finds the commit that made a server slower: git bisect, each commit
// decided by the run-level regression gate against the good commit's runs.
//
//	res, err := bisect.Run(ctx, bisect.Config{
//		Dir: "/src/server", Good: "v1.4.0", Bad: "main", Artifacts: "bisect-art",
//		Measure: func(ctx context.Context, commit string, s *gate.Series, n int) error {
//			_, err := run.Extend(ctx, s, withServerOf(commit), n, run.SeriesOptions{})
//			return err
//		},
//	})
//	fmt.Println(res.FirstBad, res.Culprit.Result.Headline())
//
// Run drives git's own bisection (git bisect start, good, bad, skip and reset in the
// repository's work tree), so the commits tested and the answer are those of `git bisect
// run`; it measures each commit in the work tree checked out at it. The good commit's
// runs are measured once, grown only when a commit's gate needs more of them, and reused
// by every commit. Each commit is gated against them with gate.Looks (the gate's
// sequential plan: K runs, more while a primary statistic is inconclusive, up to its
// cap), both sides in one session, and the gate's answer is git's verdict: regressed is
// bad, no regression (or improved) is good, inconclusive at the cap is skip, as `git
// bisect run` reads exit codes 1, 0 and 125. A commit whose server cannot be measured
// (Measure's error wraps [ErrUntestable]) is skipped too.
//
// Before any bisection the bad commit is gated: a bad side that does not regress against
// the good side has nothing to find, and Run says so rather than name a commit. Bad input
// (a revision that is not a commit, a good commit that is not an ancestor of the bad one,
// a work tree with uncommitted changes, a bisection already in progress) is an error
// wrapping [ErrInvalid] before anything is measured. Whatever happens after git bisect
// start (an error, a cancelled context, a panic in Measure), Run ends with git bisect
// reset: the work tree is back on the branch it was on.
//
// The package measures nothing itself: Measure runs the commit's server and load (the
// CLI's `perfgate bisect` starts the server by a command with the commit in it). It
// imports no load generator, mock or tokenizer, only the gate, and runs git as a
// command.
package bisect
