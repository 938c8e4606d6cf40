package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/servermetrics"
)

// Load reads a run's artifacts back from dir (as written by [Run]): the client
// recording (required), the scenario and the server recording when present. Metrics
// are recomputed from the client recording. Use it for baselines kept in testdata,
// to re-gate an old run with other objectives, or to recover a run that was killed:
// [Outcome.WriteReports] then rebuilds its exports, report and verdicts.
// A path to a .jsonl file is read as a client recording alone.
//
// A run without its manifest (perfgate_manifest.json, written last) did not finish:
// Interrupted is set. A recording whose last line was cut short by the kill keeps
// every complete line, and Truncated is set.
func Load(dir string) (*Outcome, error) {
	clientPath := filepath.Join(dir, ClientFile)
	if filepath.Ext(dir) == ".jsonl" {
		clientPath, dir = dir, filepath.Dir(dir)
	}
	if _, err := os.Stat(clientPath); err != nil {
		return nil, fmt.Errorf("scenario: load: %w", err)
	}
	o := &Outcome{Dir: dir, Files: []string{clientPath}, clientPath: clientPath}
	if _, err := os.Stat(filepath.Join(dir, reportgen.ManifestFile)); errors.Is(err, fs.ErrNotExist) && filepath.Base(clientPath) == ClientFile {
		o.Interrupted = true
	}
	if b, err := os.ReadFile(filepath.Join(dir, ScenarioFile)); err == nil && filepath.Base(clientPath) == ClientFile {
		sc, err := scenario.DecodeFile(filepath.Join(dir, ScenarioFile), b, false)
		if err != nil {
			// Artifacts written before durations were text carry nanoseconds.
			if json.Unmarshal(b, &sc) != nil {
				return nil, fmt.Errorf("scenario: load: %w", err)
			}
		}
		o.Scenario = sc
		o.Files = append(o.Files, filepath.Join(dir, ScenarioFile))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("scenario: load: %w", err)
	}
	if o.Scenario.Name == "" {
		o.Scenario.Name = filepath.Base(dir)
	}
	if f, err := os.Open(filepath.Join(dir, servermetrics.File)); err == nil {
		sum, err := servermetrics.Summarize(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("scenario: load %s: %w", servermetrics.File, err)
		}
		o.ServerMetrics = &sum
		o.Files = append(o.Files, f.Name())
	}
	if b, err := os.ReadFile(filepath.Join(dir, ValidityFile)); err == nil {
		var doc validityDoc
		if json.Unmarshal(b, &doc) == nil {
			o.Self, o.Pins, o.shards = doc.Self, doc.Pins, doc.Shards // the client's self-measurement, for Validity; what was measured
		}
	}
	serverPath := filepath.Join(dir, ServerFile)
	if _, err := os.Stat(serverPath); err == nil {
		o.serverPath, o.Mocked = serverPath, true
		o.Files = append(o.Files, serverPath)
	} else {
		serverPath = ""
	}
	// The metrics and verdicts under the scenario's own definitions (usage-based OSL,
	// the goodput SLO), in one streaming pass over the recordings.
	lc := o.Scenario.Config
	s, err := summarizeFiles(clientPath, serverPath, metricOptions(lc), lc.SLO)
	if err != nil && !errors.Is(err, record.ErrTruncated) {
		return nil, err
	}
	o.Truncated = err != nil
	o.sum, o.Metrics = s, s.metrics
	o.loadPrefixIdeal(dir)
	if err := o.loadGPU(dir); err != nil {
		return nil, err
	}
	o.completeSaved()
	o.TemplateOverhead = s.templateOverheads()
	return o, nil
}

// loadServer reads a mock server recording; nil if absent.
func loadServer(path string) ([]record.Server, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scenario: load: %w", err)
	}
	defer f.Close()
	rs, err := record.Read[record.Server](f)
	if err != nil {
		return rs, fmt.Errorf("scenario: load %s: %w", path, err)
	}
	return rs, nil
}

// loadClient reads a client recording, naming the file and line of a bad record.
func loadClient(path string) ([]record.Client, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: load: %w", err)
	}
	defer f.Close()
	cs, err := record.ReadClient(f)
	if err != nil {
		return cs, fmt.Errorf("scenario: load %s: %w", path, err)
	}
	return cs, nil
}

// BaselineFiles are the artifacts [SaveBaseline] keeps: what [Load] reads (the
// manifest only marks the run as finished).
var BaselineFiles = []string{ClientFile, ScenarioFile, ServerFile, RunStatsFile, reportgen.ManifestFile}

// SaveBaseline copies into dir the artifacts of o that [Load] needs to read the run
// back as a baseline ([BaselineFiles] present in o.Dir; the client recording is
// required), and nothing else: no exports, no report. It returns the names written
// and their total size in bytes.
func SaveBaseline(o *Outcome, dir string) (files []string, size int64, err error) {
	if o == nil || o.Dir == "" {
		return nil, 0, errors.New("scenario: save baseline: the run has no artifact directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, fmt.Errorf("scenario: save baseline: %w", err)
	}
	for _, name := range BaselineFiles {
		b, err := os.ReadFile(filepath.Join(o.Dir, name))
		if errors.Is(err, fs.ErrNotExist) && name != ClientFile {
			continue
		}
		if err == nil {
			err = reportgen.WriteFileAtomic(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(b); return err })
		}
		if err != nil {
			return files, size, fmt.Errorf("scenario: save baseline: %w", err)
		}
		files = append(files, name)
		size += int64(len(b))
	}
	return files, size, nil
}
