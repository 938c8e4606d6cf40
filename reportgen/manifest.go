package reportgen

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// ManifestFile is the file name of the run manifest written beside every export.
const ManifestFile = "perfgate_manifest.json"

// Manifest records what produced a set of exports: results without their
// configuration mislead, so [WriteExports] always writes one beside the data.
type Manifest struct {
	// Version is the perfgate version ([ModuleVersion] when empty at write time).
	Version string `json:"version"`
	// Created is when the run started (UTC). Zero = the time the manifest is written.
	Created time.Time `json:"created"`
	// Command is the command line that ran, if any (CLI runs).
	Command []string `json:"command,omitempty"`
	// Scenario is the scenario's name ("" = unnamed).
	Scenario string `json:"scenario,omitempty"`
	// Config is the full configuration as run (the Scenario struct or the loadgen
	// config), marshalled as JSON. Any JSON-able value.
	Config any `json:"config,omitempty"`
	// Seed is the random seed of the workload; re-running with it reproduces the requests.
	Seed uint64 `json:"seed"`
	// Tokenizer identifies the tokenizer that counted tokens; nil if none.
	Tokenizer *TokenizerInfo `json:"tokenizer,omitempty"`
	// Host describes the machine the run was measured on.
	Host Host `json:"host"`
	// Files lists the export files written with this manifest (base names).
	Files []string `json:"files,omitempty"`
	// VCS is the revision perfgate was built from ([BuildVCS] when nil at write time).
	VCS *VCS `json:"vcs,omitempty"`
	// Dataset, Servers and Topology pin what was measured (see pins.go); nil = unknown.
	Dataset  *Dataset  `json:"dataset,omitempty"`
	Servers  []Server  `json:"servers,omitempty"`
	Topology *Topology `json:"topology,omitempty"`
	// Aborted says why the run was stopped before it completed, by the load generator
	// itself (its client fell behind its schedule); "" = it was not. Its records up to
	// then are kept, and the run is an invalid measurement.
	Aborted string `json:"aborted,omitempty"`
}

// TokenizerInfo names a tokenizer and pins its exact contents.
type TokenizerInfo struct {
	Name        string `json:"name"`
	Source      string `json:"source,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"` // content digest (tokenizer.Tokenizer.Fingerprint)
}

// Host holds the facts about the measuring machine that change results.
type Host struct {
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Kernel     string `json:"kernel,omitempty"`
	CPUModel   string `json:"cpu_model,omitempty"`
}

// HostFacts returns the facts of the current machine (Linux extras read from /proc
// when available; missing facts are left empty).
func HostFacts() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return h
}

// ModuleVersion returns perfgate's version as the Go build info knows it: the module
// version when built as a dependency, else "devel" plus the VCS revision if stamped.
func ModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

// versionOf is ModuleVersion of bi.
func versionOf(bi *debug.BuildInfo) string {
	const mod = "github.com/perfgate/perfgate"
	if bi.Main.Path == mod && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == mod && d.Version != "" {
			return d.Version
		}
	}
	v := "devel"
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}
