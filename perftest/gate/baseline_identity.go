package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/reportgen"
)

// ReadIdentity reads the manifest of a run's artifact directory: what a baseline
// was measured with.
func ReadIdentity(dir string) (reportgen.Manifest, error) {
	var m reportgen.Manifest
	b, err := os.ReadFile(filepath.Join(dir, reportgen.ManifestFile))
	if err != nil {
		return m, fmt.Errorf("scenario: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("scenario: %s: %w", filepath.Join(dir, reportgen.ManifestFile), err)
	}
	return m, nil
}

// CompareIdentity lists what differs between a baseline's manifest and the current
// run's that makes a regression comparison between them unfair: the dataset
// fingerprint (the servers did not see the same requests), the servers' identity
// (Server header, /version, /metrics build info, in URL order) and the hardware (CPU
// model, CPU count, GOMAXPROCS, OS and architecture). A fact unknown on either side
// is not compared. nil = nothing differs.
func CompareIdentity(baseline, current reportgen.Manifest) []string {
	var d []string
	diff := func(what, a, b string) {
		if a != "" && b != "" && a != b {
			d = append(d, fmt.Sprintf("%s: baseline %s, current %s", what, a, b))
		}
	}
	if baseline.Dataset != nil && current.Dataset != nil {
		diff("dataset fingerprint", short(baseline.Dataset.Fingerprint), short(current.Dataset.Fingerprint))
	}
	for i := range min(len(baseline.Servers), len(current.Servers)) {
		b, c := baseline.Servers[i], current.Servers[i]
		diff("server header", b.Header, c.Header)
		diff("server version", b.Version, c.Version)
		if len(b.Build) > 0 && len(c.Build) > 0 && !maps.Equal(b.Build, c.Build) {
			var keys []string
			for k := range b.Build {
				if c.Build[k] != b.Build[k] {
					keys = append(keys, k)
				}
			}
			for k := range c.Build {
				if _, ok := b.Build[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			d = append(d, "server build info differs: "+strings.Join(keys, ", "))
		}
	}
	bh, ch := baseline.Host, current.Host
	diff("CPU model", bh.CPUModel, ch.CPUModel)
	if bh.CPUs > 0 && ch.CPUs > 0 && bh.CPUs != ch.CPUs {
		d = append(d, fmt.Sprintf("CPUs: baseline %d, current %d", bh.CPUs, ch.CPUs))
	}
	if bh.GOMAXPROCS > 0 && ch.GOMAXPROCS > 0 && bh.GOMAXPROCS != ch.GOMAXPROCS {
		d = append(d, fmt.Sprintf("GOMAXPROCS: baseline %d, current %d", bh.GOMAXPROCS, ch.GOMAXPROCS))
	}
	if bh.OS != "" && ch.OS != "" {
		diff("OS/arch", bh.OS+"/"+bh.Arch, ch.OS+"/"+ch.Arch)
	}
	return d
}

func short(fp string) string {
	if len(fp) > 16 {
		return fp[:16]
	}
	return fp
}
