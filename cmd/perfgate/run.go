package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/liveout"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/servermetrics"
	"github.com/perfgate/perfgate/serverproc"
	"golang.org/x/term"
)

// env is what a command sees of the world: its output streams and whether they are a
// terminal. Tests build one over buffers.
type env struct {
	stdout, stderr io.Writer
	// tty reports that stderr is a terminal (live progress line); width is its width.
	tty   bool
	width int
	// args is the full command line, for manifests.
	args []string
	// in is standard input (tokenize reads it).
	in io.Reader
	// summary is the markdown summary of what the command decided, recorded by the
	// command for --summary-md and $GITHUB_STEP_SUMMARY (writeSummary); nil: none.
	summary *reportgen.Summary
}

func (e *env) stdin() io.Reader {
	if e.in == nil {
		return os.Stdin
	}
	return e.in
}

type command struct {
	name, summary string
	run           func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"profile", "benchmark a server (aiperf-profile-compatible flags) and report", cmdProfile},
		{"mock", "run the mock OpenAI-compatible server (aiperf-mock-server-compatible flags)", cmdMock},
		{"capture", "run the mock server recording every request, to learn a client's workload", cmdCapture},
		{"report", "rebuild a run's exports, HTML report and verdicts from its client.jsonl (a killed run, or re-gate an old one)", cmdReport},
		{"merge", "make the shard directories of a sharded run one run and gate it once", cmdMerge},
		{"coordinator", "serve the start barrier of a sharded run (profile --shards N --coordinator URL)", cmdCoordinator},
		{"k8s", "print a Kubernetes manifest running a profile as N shards (Indexed Job) and a merge Job that gates", cmdK8s},
		{"compare", "HTML comparison report of two recordings", cmdCompare},
		{"bisect", "find the commit that made the server slower: git bisect, each commit gated against --good's runs (regressed bad, no regression good, inconclusive skipped)", cmdBisect},
		{"regress", "re-gate two saved directories (K runs each): exit 0 no regression, 99 regressed, 3 inconclusive (--fail-inconclusive)", cmdRegress},
		{"history", "keep gated results in a database: add, list, show, report, check (change points), export", cmdHistory},
		{"baseline", "size a regression gate's baseline (plan) and record it in sessions (add)", cmdBaseline},
		{"tokenize", "count or encode text / JSONL with a tokenizer", cmdTokenize},
		{"analyze-trace", "a mooncake trace's ideal prefix-cache hit rate, prefix reuse and the cache size that reaches 90% of it", cmdAnalyzeTrace},
		{"demo", "mock server + short profile + reports, on embedded defaults (no network)", cmdDemo},
		{"version", "print the version", cmdVersion},
	}
}

// run is the whole CLI: it parses args, runs the command and returns the exit code.
// Errors are printed as one line on stderr: "perfgate <cmd>: <what is wrong>".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, os.Stdin, stdout, stderr)
}

// runWith is run with an explicit standard input.
func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, args: append([]string{"perfgate"}, args...), in: stdin}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		e.tty = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			e.width = w
		}
	}
	if e.width == 0 {
		if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			e.width, _, _ = term.GetSize(int(f.Fd()))
		}
	}
	if len(args) == 0 {
		usage(stderr)
		return ExitInvalidConfig
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) == 1 || slices.Contains([]string{"-h", "-help", "--help", "help"}, args[1]) {
			usage(stdout)
			return ExitOK
		}
		// perfgate help CMD [SUB] is perfgate CMD [SUB] -h.
		name, args = args[1], append(slices.Clone(args[1:]), "-h")
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, e, args[1:])
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		if err != nil && !errors.Is(err, errAssertFailed) {
			msg := err.Error()
			if !strings.HasPrefix(msg, "perfgate") {
				msg = "perfgate " + name + ": " + msg
			}
			fmt.Fprintln(stderr, firstLine(msg))
		}
		return exitCode(err)
	}
	fmt.Fprintf(stderr, "perfgate: unknown command %q%s; want one of %s (perfgate help)\n", name, didYouMean(name, strings.Split(names(), ", ")), names())
	return ExitInvalidConfig
}

// didYouMean is " (did you mean X?)" for the candidate nearest to a mistyped name by
// edit distance, "" when none is near.
func didYouMean(name string, candidates []string) string {
	if near := scenario.Nearest(name, candidates); near != "" {
		return fmt.Sprintf(" (did you mean %s?)", near)
	}
	return ""
}

// firstLine keeps an error to one line: joined errors are listed "a; b".
func firstLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func names() string {
	var n []string
	for _, c := range commands() {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "perfgate: benchmarks of OpenAI-compatible LLM servers that pass or fail.")
	fmt.Fprintln(w, "\nUsage: perfgate <command> [flags]   (perfgate <command> -h for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nExit codes: %d ok, %d assertion failed, %d regression gate inconclusive, %d invalid configuration, %d runtime error or invalid measurement, %d interrupted.\n",
		ExitOK, ExitAssertFailed, ExitInconclusive, ExitInvalidConfig, ExitRuntime, ExitInterrupted)
}

// newFlags returns a flag set whose errors are returned, not printed; -h prints the
// usage to stdout.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "Usage: perfgate %s %s\n\nFlags (one or two dashes):\n", name, synopsis)
		printDefaults(e.stdout, fs)
	}
	return fs
}

// printDefaults lists flags with aliases grouped ("--model-names, --model, -m"), in
// alphabetical order, each with its usage (topic tag removed) and default.
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	for _, en := range flagEntries(fs) {
		fmt.Fprintf(w, "  %s\n      %s%s\n", en.names(), en.text, en.def())
	}
}

// parseFlags parses args and turns flag errors into one-line invalid-config errors that
// name the flag.
func parseFlags(fs *flag.FlagSet, args []string) error {
	// The flag package calls Usage on every parse error too; a bad flag must give one
	// line on stderr, not the whole flag list, so Usage is silenced while parsing and
	// called only when help was asked for.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return flag.ErrHelp
	default:
		msg := err.Error()
		if n, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) {
				if len(f.Name) > 1 || len(n) <= 2 { // a one-letter flag is no suggestion for a long name
					names = append(names, f.Name)
				}
			})
			if near := scenario.Nearest(n, names); near != "" {
				return invalidf("unknown flag --%s (did you mean --%s?)", n, near)
			}
			return invalidf("unknown flag --%s (perfgate %s -h lists the flags)", n, fs.Name())
		}
		if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
			// invalid value "x" for flag -name: reason
			val, after, _ := strings.Cut(rest, " for flag -")
			name, reason, _ := strings.Cut(after, ": ")
			if f := fs.Lookup(name); f != nil {
				if v, err := strconv.Unquote(val); err == nil {
					return badValue(f, v, reason)
				}
			}
			return invalidf("--%s: invalid value %s: %s", name, val, reason)
		}
		if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
			// invalid boolean value "x" for -name: parse error
			val, after, _ := strings.Cut(rest, " for -")
			name, _, _ := strings.Cut(after, ": ")
			if f := fs.Lookup(name); f != nil {
				if v, err := strconv.Unquote(val); err == nil {
					return badValue(f, v, "parse error")
				}
			}
		}
		if n, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
			if f := fs.Lookup(n); f != nil {
				return needsValue(f)
			}
			return invalidf("--%s needs a value", n)
		}
		return invalidf("%s", msg)
	}
	if fs.NArg() > 0 {
		return invalidf("unexpected argument %q (flags start with --; perfgate %s -h)", fs.Arg(0), fs.Name())
	}
	return nil
}

// setFlags returns the names of the flags set on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// redactArgs returns args with every credential replaced by "[redacted]": the value of
// --api-key, of a -H/--header whose name is a credential header
// (openai.CredentialHeader), the query values of --server-metrics and --gpu-telemetry URLs, the
// user information and query values of --out URLs, and the
// secrets in the command lines of --server-cmd and --baseline-server-cmd
// (serverproc.Redact: --api-key, HF_TOKEN=…), in both "--flag value" and
// "--flag=value" forms. What perfgate writes of its own command line (the manifest)
// goes through it.
func redactArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		name, val, inline := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") {
			continue
		}
		var redact func(string) string
		switch name {
		case "api-key":
			redact = func(string) string { return openai.Redacted }
		case "H", "header":
			redact = func(h string) string {
				if k, _, ok := strings.Cut(h, ":"); ok && openai.CredentialHeader(k) {
					return k + ": " + openai.Redacted
				}
				return h
			}
		case "server-metrics", "gpu-telemetry":
			redact = servermetrics.Redact // a scrape URL may carry a token in its query
		case "out":
			redact = func(v string) string { // KIND=URL: the URL may carry a password or a token
				if k, u, ok := strings.Cut(v, "="); ok {
					return k + "=" + liveout.Redact(u)
				}
				return v
			}
		case "history", "db":
			redact = history.Redact // a postgres:// URL's password
		case "server-cmd", "baseline-server-cmd", "server-ready":
			redact = serverproc.Redact // a server's --api-key, HF_TOKEN=…
		default:
			continue
		}
		switch {
		case inline:
			out[i] = out[i][:len(out[i])-len(val)] + redact(val)
		case i+1 < len(out):
			i++
			out[i] = redact(out[i])
		}
	}
	return out
}
