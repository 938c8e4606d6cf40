// Package depstest enforces perfgate's package graph, as go/build/deps_test.go does for
// the standard library. Each package may import only what its row below allows.
// Fix the code, not the table.
package depstest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/perfgate/perfgate"

// allowed maps a package (relative to the module, "..." = any subpackage) to the module
// packages it may import, directly or not. Third-party imports are checked by thirdParty.
var allowed = map[string][]string{
	"tokenizer":                 {"tokenizer/...", "internal/jsonscan"},
	"tokenizer/...":             {"tokenizer/...", "internal/jsonscan"},
	"metric":                    {"record", "internal/jsonscan"}, // the one definition of each metric: stdlib + the schema
	"distribution":              {"distribution/...", "metric", "record", "internal/jsonscan"},
	"distribution/...":          {"distribution/...", "metric", "record", "internal/jsonscan"},
	"internal/openai":           {"record", "internal/jsonscan"}, // record.AppendJSONString, the one JSON string escaper
	"internal/jsonscan":         {},                              // the JSON scanning primitives of the hand-written readers (openai, record, tokenizer)
	"internal/sse":              {},
	"internal/media":            {}, // synthetic images and audio, and media-token rules: both sides share them
	"internal/imageref":         {}, // the container image's name per version: perfgate k8s and scripts/image
	"internal/kvcache":          {},
	"internal/redact":           {},                    // URLs safe to print: servermetrics' scrape targets, liveout's receivers                    // the prefix-cache model: the mock serves it, loadgen computes the ideal hit rate with it
	"record":                    {"internal/jsonscan"}, // the JSON scanning leaf, for DecodeClient
	"internal/historyenv":       {},                    // PERFGATE_HISTORY, named once for history and perftest (which must not import history)
	"internal/testutil":         {},
	"internal/testutil/toktest": {"tokenizer/...", "internal/jsonscan"}, // test-only: loads tokenizers
	"internal/testutil/pgtest":  {},                                     // test-only: throwaway PostgreSQL clusters
	"internal/depstest":         {},
	"internal/docstest":         {},                                                           // test-only: the generated parts of the docs
	"servermetrics":             {"record", "internal/jsonscan", "internal/redact"},           // record.Duration, the one duration form in files
	"liveout":                   {"metric", "record", "internal/jsonscan", "internal/redact"}, // live metrics: a view of the records as they finish, defined as metric defines them
	"serverproc":                {},                                                           // a server build's process lifecycle: stdlib only
	"mockserver":                {"mockserver/...", "tokenizer/...", "distribution/...", "metric", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "internal/jsonscan"},
	"mockserver/...":            {"mockserver/...", "tokenizer/...", "distribution/...", "metric", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "internal/jsonscan"},
	"loadgen":                   {"loadgen/...", "tokenizer/...", "distribution/...", "metric", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "internal/jsonscan"},
	"loadgen/...":               {"loadgen/...", "tokenizer/...", "distribution/...", "metric", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "internal/jsonscan"},
	"reportgen":                 {"reportgen/...", "distribution/...", "metric", "record", "servermetrics", "internal/jsonscan", "internal/redact"},
	"reportgen/...":             {"reportgen/...", "distribution/...", "metric", "record", "servermetrics", "internal/jsonscan", "internal/redact"},
	"perftest/check":            {"distribution/...", "metric", "record", "internal/jsonscan"},
	// the regression gate's statistics decide on data: never the mock, the load
	// generator, the tokenizer or the wire types that run a scenario.
	"perftest/gate": {"perftest/check", "reportgen/...", "distribution/...", "metric", "record", "servermetrics", "internal/jsonscan", "internal/redact"},
	// bisect drives git bisect and gates each commit: measuring is the caller's.
	"perftest/bisect": {"perftest/gate", "perftest/check", "reportgen/...", "distribution/...", "metric", "record", "servermetrics", "internal/jsonscan", "internal/redact"},
	// the validity checks judge a run's measurements (a client's self-measurement is
	// loadgen's type): never the mock, a run or the gate.
	"perftest/validity": {"perftest/check", "loadgen/...", "tokenizer/...", "distribution/...", "metric", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "internal/jsonscan"},
	// a scenario is data: its fields' types are the configurations of loadgen (inline),
	// the mock, the metrics scrape, the server process, the validity checks and the gate
	// (which draws its report in reportgen's style), so it imports what they import,
	// and runs nothing: never perftest/run.
	"perftest/scenario": {"perftest/validity", "perftest/gate", "perftest/check", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/redact"},
	// run runs a scenario (the mock, the load generator, the tokenizer) and writes and
	// reads its artifacts (reportgen's exports and report).
	"perftest/run": {"perftest/scenario", "perftest/validity", "perftest/gate", "perftest/check", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/redact"},
	// merge makes one run of a sharded run's directories, with the code a run's
	// directory gets (run.LoadMerged, Outcome.WriteReports).
	"perftest/merge": {"perftest/run", "perftest/scenario", "perftest/validity", "perftest/gate", "perftest/check", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/redact"},
	// the hook by which perfhistory, when linked, records perftest.Run's outcomes.
	"perftest/internal/historyhook": {"perftest/run", "perftest/scenario", "perftest/validity", "perftest/gate", "perftest/check", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/redact"},
	// history keeps gated results in a database: it gates them (perftest/gate) and
	// draws its report in reportgen's style, reading no scenario itself; perfhistory and
	// the CLI record into it, passing in what they read of a scenario.
	"history": {"perftest/gate", "perftest/check", "reportgen/...", "distribution/...", "metric", "record", "servermetrics", "internal/jsonscan", "internal/redact", "internal/historyenv"},
	// perftest links no database driver: a test binary records into a history only
	// when it imports perftest/perfhistory.
	"perftest":             {"perftest/gate", "perftest/check", "perftest/run", "perftest/scenario", "perftest/validity", "perftest/internal/historyhook", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/redact", "internal/historyenv"},
	"perftest/perfhistory": {"perftest", "history", "perftest/internal/historyhook", "perftest/gate", "perftest/check", "perftest/run", "perftest/scenario", "perftest/validity", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/redact", "internal/historyenv"},
	"cmd/perfgate":         {"history", "liveout", "perftest/bisect", "perftest/merge", "perftest/gate", "perftest/run", "perftest/scenario", "perftest/validity", "perftest/check", "mockserver/...", "loadgen/...", "reportgen/...", "distribution/...", "metric", "tokenizer/...", "internal/openai", "internal/media", "internal/kvcache", "internal/sse", "record", "servermetrics", "serverproc", "internal/jsonscan", "internal/imageref", "internal/redact", "internal/historyenv"},
	"bench/...":            {"..."},
	"scripts/...":          {},                    // tools the scripts run (flakehunt's tally): stdlib only
	"scripts/image":        {"internal/imageref"}, // the container image build: names the image as perfgate k8s does
}

// direct narrows, for some packages, what they import themselves below their row in
// allowed, where their dependencies bring in more than they may use.
var direct = map[string][]string{
	// a scenario's data imports the packages that define its fields' types and check
	// their values: never the tokenizer, reportgen or the wire types those bring in, nor
	// a run (perftest/run).
	"perftest/scenario": {"perftest/validity", "perftest/gate", "perftest/check", "mockserver", "loadgen", "loadgen/dataset", "distribution", "record", "servermetrics", "serverproc", "internal/kvcache"},
}

// thirdParty lists the non-stdlib module prefixes each package family may use.
var thirdParty = map[string][]string{
	"tokenizer":    {"github.com/dlclark/regexp2", "golang.org/x/text", "github.com/daulet/tokenizers"},
	"distribution": {"gonum.org/v1/gonum", "github.com/montanaflynn/stats", "golang.org/x/"},
	// servermetrics parses the Prometheus exposition format with Prometheus's own parser.
	"servermetrics": {"github.com/prometheus/common/", "github.com/prometheus/client_model/", "internal/redact"},
	// liveout sends with the maintained clients of each protocol: client_golang's
	// remote-write API (protobuf encoded by the protobuf library) and the OpenTelemetry
	// SDK's OTLP/HTTP exporter.
	"liveout": {"github.com/prometheus/client_golang/exp/", "google.golang.org/protobuf/", "go.opentelemetry.io/otel", "internal/redact"},
	// mockserver serves its metrics through client_golang (and renders them with expfmt).
	"mockserver": {"github.com/prometheus/client_golang/", "github.com/prometheus/common/", "github.com/prometheus/client_model/", "github.com/valyala/fasthttp", "golang.org/x/"},
	// cmd/perfgate alone builds Kubernetes manifests (perfgate k8s), from the API types.
	// history alone talks to databases: SQLite (pure Go) and PostgreSQL.
	"history": {"modernc.org/sqlite", "github.com/jackc/pgx/v5", "gonum.org/v1/gonum"},
	// and alone draws a terminal UI (the live dashboard: Bubble Tea, Lip Gloss; x/sys for the
	// supervisor's terminal hand-over).
	"cmd":      {"golang.org/x/term", "golang.org/x/sys/", "k8s.io/api/", "k8s.io/apimachinery/", "sigs.k8s.io/yaml", "charm.land/bubbletea/v2", "charm.land/lipgloss/v2"},
	"internal": {"github.com/valyala/fasthttp", "github.com/andybalholm/brotli", "github.com/klauspost/compress", "github.com/valyala/bytebufferpool", "golang.org/x/"},
	// scripts/image alone builds the container image, so perfgate never links go-containerregistry.
	"scripts": {"github.com/google/go-containerregistry/"},
}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Deps       []string
	Imports    []string
	Standard   bool
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list %s/...: %v", module, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r, true
	}
	return "", false
}

func matches(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

func rowFor(p string) ([]string, bool) {
	if a, ok := allowed[p]; ok {
		return a, true
	}
	best := ""
	for k := range allowed {
		if strings.HasSuffix(k, "/...") && matches(k, p) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return nil, false
	}
	return allowed[best], true
}

func TestPackageGraph(t *testing.T) {
	for _, p := range listPackages(t) {
		r, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		if strings.HasPrefix(r, "examples_test") {
			continue // test-only package: may import anything
		}
		row, ok := rowFor(r)
		if !ok {
			t.Errorf("package %s has no row in the allowlist; add one to internal/depstest", r)
			continue
		}
		for _, d := range p.Deps {
			dr, ok := rel(d)
			if !ok || dr == r {
				continue
			}
			if !slices.ContainsFunc(row, func(a string) bool { return matches(a, dr) }) {
				t.Errorf("%s imports %s (directly or not); the graph does not allow it", r, dr)
			}
		}
	}
}

// TestDirectImports checks the packages of direct against their own imports.
func TestDirectImports(t *testing.T) {
	seen := 0
	for _, p := range listPackages(t) {
		r, ok := rel(p.ImportPath)
		row, narrowed := direct[r]
		if !ok || !narrowed {
			continue
		}
		seen++
		for _, imp := range p.Imports {
			ir, ok := rel(imp)
			if ok && !slices.ContainsFunc(row, func(a string) bool { return matches(a, ir) }) {
				t.Errorf("%s imports %s itself; only through its dependencies may it reach it", r, ir)
			}
		}
	}
	if seen != len(direct) {
		t.Errorf("%d of the %d packages of direct were listed", seen, len(direct))
	}
}

// TestOnlyPerftestImportsTesting checks that no non-test build of a library package
// pulls in "testing", except perftest (the adapter), perftest/perfhistory (its history
// adapter) and internal/testutil (test helpers).
func TestOnlyPerftestImportsTesting(t *testing.T) {
	for _, p := range listPackages(t) {
		r, ok := rel(p.ImportPath)
		if !ok || r == "perftest" || r == "perftest/perfhistory" || r == "internal/testutil" || r == "internal/testutil/toktest" || r == "internal/testutil/pgtest" || r == "internal/depstest" || strings.HasPrefix(r, "examples_test") {
			continue
		}
		if slices.Contains(p.Deps, "testing") {
			t.Errorf("%s imports \"testing\" outside its tests; only perftest may", r)
		}
	}
}

func TestThirdPartyImports(t *testing.T) {
	for _, p := range listPackages(t) {
		r, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		family := strings.SplitN(r, "/", 2)[0]
		allow, ok := thirdParty[family]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if _, mine := rel(imp); mine || !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // module-internal or standard library
			}
			if !slices.ContainsFunc(allow, func(a string) bool { return strings.HasPrefix(imp, a) }) {
				t.Errorf("%s imports third-party %s; allowed for %s/: %v", r, imp, family, allow)
			}
		}
	}
}

// databaseDrivers are the modules that talk to a history's database.
var databaseDrivers = []string{"modernc.org/sqlite", "github.com/jackc/pgx"}

// TestPerftestLinksNoDatabaseDriver: a test binary that uses perftest (perftest's own
// tests, the examples, a scenario or a gate) links no database driver: only importing
// perftest/perfhistory does. -test lists what the test binaries link.
func TestPerftestLinksNoDatabaseDriver(t *testing.T) {
	users := []string{module + "/perftest", module + "/examples_test", module + "/perftest/scenario", module + "/perftest/run", module + "/perftest/gate"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-test"}, users...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps -test %v: %v", users, err)
	}
	if bad := driversIn(strings.Fields(string(out))); len(bad) > 0 {
		t.Errorf("a plain perftest user links the database drivers %v; only perftest/perfhistory may bring them in", bad)
	}
	// And the check sees them where they are.
	out, err = exec.Command("go", "list", "-deps", module+"/perftest/perfhistory").Output()
	if err != nil {
		t.Fatalf("go list -deps perftest/perfhistory: %v", err)
	}
	if bad := driversIn(strings.Fields(string(out))); len(bad) != len(databaseDrivers) {
		t.Errorf("perftest/perfhistory links %v; want every one of %v (else the check above proves nothing)", bad, databaseDrivers)
	}
}

// driversIn returns the database drivers (by module prefix) among the packages pkgs.
func driversIn(pkgs []string) []string {
	var found []string
	for _, d := range databaseDrivers {
		if slices.ContainsFunc(pkgs, func(p string) bool { return strings.HasPrefix(p, d) }) {
			found = append(found, d)
		}
	}
	return found
}

// TestKubernetesOnlyInCmd: the Kubernetes API types (a large dependency) reach no
// package but cmd/perfgate, directly or not.
func TestKubernetesOnlyInCmd(t *testing.T) {
	for _, p := range listPackages(t) {
		r, ok := rel(p.ImportPath)
		if !ok || r == "cmd/perfgate" {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "k8s.io/") || strings.HasPrefix(d, "sigs.k8s.io/") {
				t.Errorf("%s depends on %s; only cmd/perfgate may use the Kubernetes types", r, d)
				break
			}
		}
	}
}

// TestAllowlistCatchesViolation shows the check can fail: a fabricated package that
// imports loadgen from mockserver is rejected by the same matching rules.
func TestAllowlistCatchesViolation(t *testing.T) {
	row, ok := rowFor("mockserver")
	if !ok {
		t.Fatal("no row for mockserver")
	}
	if slices.ContainsFunc(row, func(a string) bool { return matches(a, "loadgen") }) {
		t.Error("mockserver may import loadgen; the graph forbids it")
	}
	if _, ok := rowFor("newpkg"); ok {
		t.Error("an unknown package got a row; it must be added explicitly")
	}
	if !matches("tokenizer/...", "tokenizer/internal/jinja") || matches("tokenizer/...", "tokenizerx") {
		t.Error("pattern matching is wrong")
	}
}
