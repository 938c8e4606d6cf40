package reportgen

import (
	"runtime/debug"
	"time"
)

// What a result was measured with, pinned in the manifest beside the configuration,
// the seed, the tokenizer and the host: the build that measured, the requests sent,
// the server that answered and the path between them. A comparison of two runs reads
// them to say whether the runs can be compared at all (gate.CompareIdentity).

// VCS is the version-control state perfgate was built from, as `go build` stamps it.
type VCS struct {
	Revision string    `json:"revision,omitempty"`
	Time     time.Time `json:"time,omitzero"`
	// Modified reports uncommitted changes in the tree built.
	Modified bool `json:"modified"`
}

// Dataset pins the requests a run sent.
type Dataset struct {
	// Fingerprint is the hex SHA-256 over the SHA-256 of each request body in send
	// order (request index order; a per-run cache-bust salt is replaced by a fixed
	// placeholder first): equal for equal seeded workloads.
	Fingerprint string `json:"fingerprint"`
	// Requests is the number of bodies it covers (warm-up included).
	Requests int `json:"requests"`
}

// Server identifies the server that answered.
type Server struct {
	URL string `json:"url"`
	// Header is the Server header of its answers ("uvicorn", "perfgate-mock").
	Header string `json:"header,omitempty"`
	// Version is what GET /version answered (vLLM: {"version": "0.11.0"}), trimmed.
	Version string `json:"version,omitempty"`
	// Build holds the labels of the build/info gauges its /metrics exposes
	// (e.g. vllm:cache_config_info, python_info), when it was scraped.
	Build map[string]string `json:"build,omitempty"`
}

// Topology is the path from the client to the server.
type Topology struct {
	// ClientHost is the measuring machine's host name.
	ClientHost string `json:"client_host"`
	// Addrs are the servers' addresses as the client resolved them ("10.0.0.7:8000").
	Addrs []string `json:"addrs,omitempty"`
	// RTT is the TCP connect time to the first server at preflight (one round trip).
	RTT time.Duration `json:"rtt_ns,omitempty"`
	// Shards is the number of load-generator processes the run was split into (1 =
	// one).
	Shards int `json:"shards"`
}

// BuildVCS returns perfgate's version-control stamp from the running binary's build
// info (nil when it has none: `go test`, or a build outside a repository).
func BuildVCS() *VCS {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return vcsOf(bi)
}

func vcsOf(bi *debug.BuildInfo) *VCS {
	var v VCS
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Revision == "" {
		return nil
	}
	return &v
}
