package history

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/reportgen"
)

// Identity is what a result says of the server under test, and where its artifacts
// are kept. Fields left empty are filled by [Identity.FromEnv].
type Identity struct {
	Commit, Branch, Build string
	// Artifacts is the path or URL of the artifacts (default: the directory read).
	Artifacts string
	// Topology overrides the topology read from the artifacts.
	Topology string
}

// ciVars lists, per field, the variables CI systems set, most specific first:
// perfgate's own, then GitHub Actions, GitLab CI, Buildkite, Jenkins.
var ciVars = map[string][]string{
	"commit": {"PERFGATE_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "GIT_COMMIT"},
	"branch": {"PERFGATE_BRANCH", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH", "GIT_BRANCH"},
	"build":  {"PERFGATE_BUILD", "GITHUB_RUN_ID", "CI_PIPELINE_ID", "BUILDKITE_BUILD_NUMBER", "BUILD_NUMBER"},
}

// FromEnv returns id with its empty Commit, Branch and Build taken from the
// environment (getenv: os.Getenv): PERFGATE_COMMIT, PERFGATE_BRANCH, PERFGATE_BUILD,
// else the CI system's (GITHUB_SHA, CI_COMMIT_SHA, … ; see docs/history.md). In CI,
// these name the commit the pipeline built, which is the server under test when the
// pipeline builds the server.
func (id Identity) FromEnv(getenv func(string) string) Identity {
	first := func(names []string) string {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return v
			}
		}
		return ""
	}
	id.Commit = cmp.Or(id.Commit, first(ciVars["commit"]))
	id.Branch = cmp.Or(id.Branch, first(ciVars["branch"]))
	id.Build = cmp.Or(id.Build, first(ciVars["build"]))
	return id
}

// Fingerprint is the workload's identity: a digest of what was sent, the workload's
// settings as the scenario side names them (gate.Workload's Settings, from package
// scenario's Scenario.Workload: tokenizer, endpoint, lengths, corpus, load, …),
// leaving out where it was sent (the URLs), so a server on another host or port stays
// in the same series.
func Fingerprint(settings [][2]string) string {
	h := sha256.New()
	h.Write([]byte("perfgate workload v1\n"))
	for _, kv := range settings {
		if kv[0] == "urls" {
			continue
		}
		fmt.Fprintf(h, "%s=%s\n", kv[0], kv[1])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// CheckSeries refuses what dir's series says that a result cannot be made of, before
// any of it is followed: a run directory outside dir (runs.json's "dirs" are read as
// the runs' records; a baseline written by `history baseline` points at runs kept
// elsewhere, which are results of their own), or a run without statistics (the store
// keeps a run by its statistics, so it would read back without it while its verdicts
// stay). The error names the file and field when dir has a runs.json, else the run's
// directory.
func CheckSeries(dir string, s *gate.Series) error {
	index := filepath.Join(dir, gate.RunsFile)
	_, err := os.Stat(index)
	indexed := err == nil
	where := func(field string, i int) string {
		if indexed {
			return fmt.Sprintf("%s: %s[%d]", index, field, i)
		}
		return filepath.Join(dir, s.Dirs[i])
	}
	root, rootErr := filepath.EvalSymlinks(dir)
	for i, d := range s.Dirs {
		if !filepath.IsLocal(d) {
			return fmt.Errorf("history: %s: %q leaves the artifact directory %s", where("dirs", i), d, dir)
		}
		if rootErr != nil {
			continue
		}
		// A run directory that does not resolve is left for the run's reader to report.
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, d)); err == nil {
			if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
				return fmt.Errorf("history: %s: %q leaves the artifact directory %s (a symbolic link to %s)", where("dirs", i), d, dir, real)
			}
		}
	}
	for i, r := range s.Runs {
		if len(r.Stats) == 0 {
			if indexed {
				return fmt.Errorf("history: %s.stats: %s", where("runs", i), errNoStats)
			}
			return fmt.Errorf("history: %s: run %d: %s", where("", i), i+1, errNoStats)
		}
	}
	return nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// FromSeries builds a result of the runs of s (K runs of one scenario, in order, its
// Workload described by the scenario side: the name and the fingerprint the result is
// filed under) and verdicts (each run's, in the order they were printed; named "run N:
// check" when there are several runs): each run's statistics as s has them, the
// scenario as s keeps it (its JSON), and the identity from the first run's manifest
// (start time, perfgate version, host) and id. A series of runs kept nowhere (s.Dir
// and its run directories empty or ".") is stamped now, on this machine.
func FromSeries(s *gate.Series, verdicts [][]check.Verdict, id Identity) (*Result, error) {
	if s == nil || s.Len() == 0 {
		return nil, errors.New("history: no runs")
	}
	if s.Workload == nil {
		return nil, errors.New("history: the runs' workload is unknown (describe the series with package perftest/run): a result is filed under its workload")
	}
	r := &Result{
		Fingerprint: Fingerprint(s.Workload.Settings), Scenario: cmp.Or(s.Workload.Name, "unnamed"),
		Commit: id.Commit, Branch: id.Branch, Build: id.Build, Artifacts: id.Artifacts, Topology: id.Topology,
	}
	if len(s.Scenario) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, s.Scenario); err == nil {
			r.Config = b.Bytes()
		}
	}
	first := runPath(s, 0)
	if r.Artifacts == "" && first != "" {
		r.Artifacts = absPath(first)
		if s.Len() > 1 && strings.HasPrefix(filepath.Base(first), "run-") {
			r.Artifacts = filepath.Dir(r.Artifacts) // K runs: their series' directory
		}
	}
	man, err := readManifest(first)
	switch {
	case err == nil:
		r.Created, r.Version, r.Host = man.Created.UTC(), man.Version, hostString(man.Host)
	case errors.Is(err, fs.ErrNotExist) || first == "":
		r.Created, r.Version, r.Host = time.Now().UTC(), reportgen.ModuleVersion(), hostString(reportgen.HostFacts())
	default:
		return nil, err
	}
	for i, rs := range s.Runs {
		r.Runs = append(r.Runs, Run{Run: i + 1, Stats: rs.Stats})
		if i >= len(verdicts) {
			continue
		}
		for _, v := range verdicts[i] {
			name := v.Check
			if s.Len() > 1 {
				name = fmt.Sprintf("run %d: %s", i+1, v.Check)
			}
			r.Verdicts = append(r.Verdicts, Verdict{Check: name, Pass: v.Pass, Status: v.Status.String(), Summary: v.Summary, Value: v.Value, Unit: string(v.Unit)})
		}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// runPath is run i's directory: s.Dirs[i], under s.Dir when relative ("" for a run kept
// nowhere).
func runPath(s *gate.Series, i int) string {
	if i >= len(s.Dirs) {
		return ""
	}
	d := s.Dirs[i]
	if s.Dir == "" {
		if d == "." {
			return ""
		}
		return d
	}
	if filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(s.Dir, d)
}

func readManifest(dir string) (reportgen.Manifest, error) {
	var m reportgen.Manifest
	if dir == "" {
		return m, fs.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(dir, reportgen.ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("history: %s: %w", filepath.Join(dir, reportgen.ManifestFile), err)
	}
	return m, nil
}

func hostString(h reportgen.Host) string {
	s := fmt.Sprintf("%s (%d CPUs", cmp.Or(h.Hostname, "unknown host"), h.CPUs)
	if h.CPUModel != "" {
		s += ", " + h.CPUModel
	}
	return s + ")"
}
