package mockserver

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/openai"
)

// endpoint is one line of the documented endpoint list: the paths one kind is routed
// from, or the paths of probes that answer alike.
type endpoint struct {
	method string // "" = any method
	paths  []string
	what   string
	api    bool // a workload: recorded and counted
}

// endpoints lists what the server answers, from its routing tables: each kind of
// [routes] with its paths (named by the API kinds of internal/openai its paths are
// for), then the [probes], those answering alike on one line.
func endpoints() ([]endpoint, error) {
	byKind := map[string][]string{}
	for p, k := range routes {
		byKind[fmt.Sprintf("%T", k)] = append(byKind[fmt.Sprintf("%T", k)], p)
	}
	var api, ops []endpoint
	for typ, paths := range byKind {
		slices.Sort(paths)
		var names []string
		for _, p := range paths {
			if n := openai.KindOfPath(p); n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("kind %s is routed from %v, none of them an API kind's path in internal/openai", typ, paths)
		}
		slices.Sort(names)
		api = append(api, endpoint{method: "POST", paths: paths, what: "`" + strings.Join(names, "`, `") + "`", api: true})
	}
	byWhat := map[[2]string][]string{}
	for p, pr := range probes {
		byWhat[[2]string{pr.method, pr.what}] = append(byWhat[[2]string{pr.method, pr.what}], p)
	}
	for k, paths := range byWhat {
		slices.Sort(paths)
		ops = append(ops, endpoint{method: k[0], paths: paths, what: k[1]})
	}
	slices.SortFunc(api, func(a, b endpoint) int { return strings.Compare(a.what, b.what) })
	slices.SortFunc(ops, func(a, b endpoint) int { return strings.Compare(a.paths[0], b.paths[0]) })
	return append(api, ops...), nil
}

func (e endpoint) methodName() string {
	if e.method == "" {
		return "any method"
	}
	return e.method
}

const (
	docFile        = "doc.go"
	docBegin       = "// Paths, from the routing tables (go test ./mockserver -run TestDocEndpoints -update):"
	docEnd         = "package mockserver"
	docTail        = "A POST to an API path is the workload: recorded, counted and summarised. A probe is\n// neither. Any other path is answered 404 with an OpenAI error body, a probe's path\n// with another method 405."
	mdEnd          = "<!-- mock-paths:end -->"
	mockDocFile    = "../docs/mock.md"
	kindsDocFile   = "../docs/endpoints.md"
	mdBeginPrefix  = "<!-- mock-paths:begin "
	mdBeginAll     = mdBeginPrefix + "(every path; generated from mockserver's routing tables by `go test ./mockserver -run TestDocEndpoints -update`; do not edit) -->"
	mdBeginAPIOnly = mdBeginPrefix + "(API paths; generated from mockserver's routes by `go test ./mockserver -run TestDocEndpoints -update`; do not edit) -->"
)

// docList is doc.go's endpoint list: after the line docBegin, a Go doc comment list
// (as gofmt lays it out) and docTail.
func docList(eps []endpoint) string {
	var b strings.Builder
	b.WriteString("//\n")
	for _, e := range eps {
		fmt.Fprintf(&b, "//   - %s %s: %s\n", e.methodName(), strings.Join(e.paths, ", "), strings.ReplaceAll(e.what, "`", ""))
	}
	b.WriteString("//\n// " + docTail + "\n")
	return b.String()
}

// mdTable is the endpoint table of docs/mock.md (all) or docs/endpoints.md (the API
// paths alone).
func mdTable(eps []endpoint, all bool) string {
	var b strings.Builder
	b.WriteString("| method | path | answers |\n|---|---|---|\n")
	for _, e := range eps {
		if !e.api && !all {
			continue
		}
		what := e.what + " (not recorded)"
		if e.api {
			what = "API kind " + e.what + " (recorded)"
			if strings.Contains(e.what, ",") {
				what = "API kinds " + e.what + " (recorded)"
			}
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", e.methodName(), strings.Join(e.paths, "`, `"), what)
	}
	return b.String()
}

// splice replaces the text between the line begin and the next line end in doc with
// text; old is what was there.
func splice(name string, doc []byte, begin, end, text string) (out []byte, old string, err error) {
	i := bytes.Index(doc, []byte(begin+"\n"))
	if i < 0 {
		return nil, "", fmt.Errorf("%s: no line %q", name, begin)
	}
	i += len(begin) + 1
	j := bytes.Index(doc[i:], []byte(end+"\n"))
	if j < 0 {
		return nil, "", fmt.Errorf("%s: no line %q after %q", name, end, begin)
	}
	return slices.Concat(doc[:i], []byte(text), doc[i+j:]), string(doc[i : i+j]), nil
}

// TestDocEndpoints: the endpoint lists of doc.go, docs/mock.md and docs/endpoints.md
// are the routing tables', so a route added, moved or removed without regenerating
// them fails here.
func TestDocEndpoints(t *testing.T) {
	eps, err := endpoints()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ file, begin, end, text string }{
		{docFile, docBegin, docEnd, docList(eps)},
		{mockDocFile, mdBeginAll, mdEnd, mdTable(eps, true)},
		{kindsDocFile, mdBeginAPIOnly, mdEnd, mdTable(eps, false)},
	} {
		doc, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		out, old, err := splice(f.file, doc, f.begin, f.end, f.text)
		if err != nil {
			t.Fatal(err)
		}
		if old == f.text {
			continue
		}
		if *updateGolden {
			if err := os.WriteFile(f.file, out, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s's endpoint list is stale; run go test ./mockserver -run TestDocEndpoints -update\ngot:\n%s\nwant:\n%s", f.file, old, f.text)
	}
}

// A route added to the tables shows up in the generated lists (a new kind under its
// API name, a path added to a kind on that kind's line), and a route whose paths
// belong to no API kind is refused.
func TestDocEndpointsFollowRoutes(t *testing.T) {
	before, err := endpoints()
	if err != nil {
		t.Fatal(err)
	}
	routes["/v3/chat/completions"] = chatKind{}
	t.Cleanup(func() { delete(routes, "/v3/chat/completions") })
	after, err := endpoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || !strings.Contains(docList(after), "POST /v1/chat/completions, /v3/chat/completions: chat\n") ||
		!strings.Contains(mdTable(after, false), "| POST | `/v1/chat/completions`, `/v3/chat/completions` | API kind `chat` (recorded) |\n") {
		t.Errorf("a path added to chat is not on chat's line:\n%s\n%s", docList(after), mdTable(after, false))
	}
	if strings.Contains(mdTable(after, false), "/metrics") || !strings.Contains(mdTable(after, true), "| any method | `/metrics` | Prometheus metrics (not recorded) |") {
		t.Errorf("probes: in the API table or not in the full one:\n%s", mdTable(after, true))
	}
	routes["/v1/test/upload"] = uploadKind{}
	t.Cleanup(func() { delete(routes, "/v1/test/upload") })
	if _, err := endpoints(); err == nil || !strings.Contains(err.Error(), "mockserver.uploadKind is routed from [/v1/test/upload]") {
		t.Errorf("a kind on no API path: %v; want an error naming it", err)
	}
	if _, _, err := splice("x.go", []byte("// a\npackage x\n"), docBegin, docEnd, ""); err == nil || !strings.Contains(err.Error(), "x.go: no line") {
		t.Errorf("a file without the marker: %v", err)
	}
}
