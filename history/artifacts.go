package history

import (
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

	"github.com/perfgate/perfgate/perftest/scenario"
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

// Fingerprint is the workload's identity: a digest of what was sent
// ([scenario.Scenario.Workload]: tokenizer, endpoint, lengths, corpus, load, …),
// leaving out where it was sent (the URLs), so a server on another host or port
// stays in the same series.
func Fingerprint(sc scenario.Scenario) string {
	h := sha256.New()
	h.Write([]byte("perfgate workload v1\n"))
	for _, kv := range sc.Workload() {
		if kv[0] == "urls" {
			continue
		}
		fmt.Fprintf(h, "%s=%s\n", kv[0], kv[1])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// FromDir reads the result saved in an artifact directory: K runs (a runs.json index,
// or run-NNN subdirectories) or one run, as [scenario.LoadSeries] reads a baseline.
// Each run's verdicts are re-derived from its records under the scenario's
// objectives; an interrupted run (no manifest) is refused.
func FromDir(dir string, id Identity) (*Result, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("history: %s is not a directory of artifacts", dir)
	}
	series, err := scenario.LoadSeries(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := checkSeries(dir, series); err != nil {
		return nil, err
	}
	var outs []*scenario.Outcome
	for i := range series.Dirs {
		o, err := series.Outcome(i)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if o.Interrupted {
			return nil, fmt.Errorf("history: %s did not finish (no %s): an interrupted run is not a result", o.Dir, reportgen.ManifestFile)
		}
		outs = append(outs, o)
	}
	id.Artifacts = cmp.Or(id.Artifacts, absPath(dir))
	r, err := FromOutcomes(outs, id)
	if err != nil {
		return nil, err
	}
	for i := range r.Runs {
		r.Runs[i].Stats = series.Runs[i].Stats // as the gate compared them
	}
	return r, nil
}

// checkSeries refuses what dir's series says that a result cannot be made of, before
// any of it is followed: a run directory outside dir (runs.json's "dirs" are read as
// the runs' records; a baseline written by `history baseline` points at runs kept
// elsewhere, which are results of their own), or a run without statistics (the store
// keeps a run by its statistics, so it would read back without it while its verdicts
// stay). The error names the file and field when dir has a runs.json, else the run's
// directory.
func checkSeries(dir string, s *scenario.Series) error {
	index := filepath.Join(dir, scenario.RunsFile)
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

// FromOutcomes builds a result of the runs outs (K runs of one scenario, in order):
// each run's statistics ([scenario.Outcome.RunStats], or its runstats.json), the
// verdicts of each (named "run N: check" when there are several), and the identity
// from the first run's manifest (start time, perfgate version, host) and id.
func FromOutcomes(outs []*scenario.Outcome, id Identity) (*Result, error) {
	if len(outs) == 0 {
		return nil, errors.New("history: no runs")
	}
	first := outs[0]
	sc := first.Scenario
	r := &Result{
		Fingerprint: Fingerprint(sc), Scenario: cmp.Or(sc.Name, "unnamed"),
		Commit: id.Commit, Branch: id.Branch, Build: id.Build, Artifacts: id.Artifacts,
		Topology: cmp.Or(id.Topology, topology(first)),
	}
	sc.APIKey = ""
	if b, err := json.Marshal(sc); err == nil {
		r.Config = b
	}
	if r.Artifacts == "" && first.Dir != "" {
		r.Artifacts = absPath(first.Dir)
		if len(outs) > 1 && strings.HasPrefix(filepath.Base(first.Dir), "run-") {
			r.Artifacts = filepath.Dir(r.Artifacts) // K runs: their series' directory
		}
	}
	man, err := readManifest(first.Dir)
	switch {
	case err == nil:
		r.Created, r.Version, r.Host = man.Created.UTC(), man.Version, hostString(man.Host)
	case errors.Is(err, fs.ErrNotExist) || first.Dir == "":
		r.Created, r.Version, r.Host = time.Now().UTC(), reportgen.ModuleVersion(), hostString(reportgen.HostFacts())
	default:
		return nil, err
	}
	for i, o := range outs {
		rs, err := scenario.ReadRunStats(o.Dir)
		if o.Dir == "" || err != nil {
			rs = o.RunStats()
		}
		r.Runs = append(r.Runs, Run{Run: i + 1, Stats: rs.Stats})
		for _, v := range o.Check() {
			name := v.Check
			if len(outs) > 1 {
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

// topology describes what the run measured: the mock, or how many servers, and shards.
func topology(o *scenario.Outcome) string {
	t := "mock"
	if n := len(o.Scenario.URLs); !o.Mocked && n > 0 {
		t = fmt.Sprintf("%d url", n)
		if n > 1 {
			t += "s"
		}
	}
	if b, err := os.ReadFile(filepath.Join(o.Dir, scenario.MergeFile)); err == nil {
		var m struct {
			Shards []json.RawMessage `json:"shards"`
		}
		if json.Unmarshal(b, &m) == nil && len(m.Shards) > 0 {
			t = fmt.Sprintf("%d shards × %s", len(m.Shards), t)
		}
	}
	return t
}
