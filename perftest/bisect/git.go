package bisect

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// repo runs git in one work tree, in the C locale (its bisect output is parsed).
type repo struct{ dir string }

// git runs git with args and returns its standard output, trimmed; its error quotes
// git's standard error.
func (r repo) git(args ...string) (string, error) {
	out, err := r.run(args...)
	return strings.TrimSpace(out), err
}

// run is git's output untrimmed, and its error naming the command and quoting stderr.
func (r repo) run(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANGUAGE=", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return stdout.String(), &gitError{args: args, msg: msg, err: err}
	}
	return stdout.String(), nil
}

// gitError is a git command that failed: the command, what git said, its exit.
type gitError struct {
	args []string
	msg  string
	err  error
}

func (e *gitError) Error() string {
	s := "bisect: git " + strings.Join(e.args, " ") + ": " + e.err.Error()
	if e.msg != "" {
		s += ": " + firstLines(e.msg, 3)
	}
	return s
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of a git command that ran and failed (-1 otherwise).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func firstLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = append(ls[:n], "…")
	}
	return strings.Join(ls, " / ")
}

// commit resolves rev to a commit's full hash, or says which flag named what.
func (r repo) commit(flag, rev string) (string, error) {
	if strings.TrimSpace(rev) == "" {
		return "", fmt.Errorf("%w: %s: no revision given", ErrInvalid, flag)
	}
	sha, err := r.git("rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || sha == "" {
		return "", fmt.Errorf("%w: %s %q: not a commit of the repository in %s", ErrInvalid, flag, rev, r.where())
	}
	return sha, nil
}

func (r repo) where() string {
	if r.dir == "" {
		return "the current directory"
	}
	return r.dir
}

// check reports what keeps git bisect from running here, before anything is measured:
// not a work tree, a bisection already under way, uncommitted changes to tracked files
// (each checkout would carry them or fail).
func (r repo) check() error {
	if out, err := r.git("rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return fmt.Errorf("%w: %s is not in a git work tree (give the repository with -C DIR)", ErrInvalid, r.where())
	}
	if p, err := r.git("rev-parse", "--git-path", "BISECT_START"); err == nil {
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.dir, p)
		}
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%w: a git bisect is already under way in %s: finish it, or end it with git bisect reset", ErrInvalid, r.where())
		}
	}
	out, err := r.run("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if strings.TrimSpace(out) != "" {
		var files []string
		for _, l := range strings.Split(out, "\n") {
			if len(l) > 3 { // "XY path"
				files = append(files, l[3:])
			}
		}
		return fmt.Errorf("%w: the work tree in %s has uncommitted changes (%s): git bisect checks out each commit; commit or stash them first",
			ErrInvalid, r.where(), firstLines(strings.Join(files, "\n"), 5))
	}
	return nil
}

// ancestor reports whether a is an ancestor of b.
func (r repo) ancestor(a, b string) (bool, error) {
	_, err := r.git("merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, err
}

// subject is a commit's one-line subject ("" if it cannot be read).
func (r repo) subject(sha string) string {
	s, _ := r.git("log", "-1", "--format=%s", sha)
	return s
}

// checkout detaches the work tree at sha.
func (r repo) checkout(sha string) error {
	_, err := r.git("checkout", "--quiet", "--detach", sha)
	return err
}

// state is where git's bisection is after a command: the next commit to test (git has
// checked it out), or the first bad commit, or the commits it could be when only
// skipped ones are left.
type state struct {
	next       string
	progress   string // "Bisecting: 3 revisions left to test after this (roughly 2 steps)"
	firstBad   string
	candidates []string
}

func (s state) done() bool { return s.firstBad != "" || len(s.candidates) > 0 }

var (
	firstBadLine = regexp.MustCompile(`(?m)^([0-9a-f]{40,64}) is the first bad commit`)
	shaLine      = regexp.MustCompile(`^[0-9a-f]{40,64}$`)
)

// bisect runs a git bisect subcommand (start, good, bad, skip) and reads where the
// bisection is from its output, as git bisect run does: "X is the first bad commit",
// "There are only 'skip'ped commits left to test" with the commits that could be it
// (git exits 2 then), or the next commit, checked out.
func (r repo) bisect(args ...string) (state, error) {
	out, err := r.run(append([]string{"bisect"}, args...)...)
	if m := firstBadLine.FindStringSubmatch(out); m != nil {
		return state{firstBad: m[1]}, nil
	}
	if strings.Contains(out, "only 'skip'ped commits left") {
		var st state
		in := false
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "The first bad commit could be any of"):
				in = true
			case in && shaLine.MatchString(l):
				st.candidates = append(st.candidates, l)
			case in:
				in = false
			}
		}
		if len(st.candidates) > 0 {
			return st, nil
		}
	}
	if err != nil {
		return state{}, err
	}
	next, err := r.git("rev-parse", "HEAD")
	if err != nil {
		return state{}, err
	}
	st := state{next: next}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Bisecting:") {
			st.progress = strings.TrimPrefix(l, "Bisecting: ")
		}
	}
	return st, nil
}
