package scenario

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var updateRefDoc = flag.Bool("update-scenario-doc", false, "rewrite docs/scenario-reference.md from the config types")

const refDocPath = "../../docs/scenario-reference.md"

// fieldDocs reads the doc comments of struct fields from the source of the package at
// pkgPath (a package of this module): type name → field name → comment text.
type fieldDocs map[string]map[string]map[string]string // pkg → type → field → text

func (d fieldDocs) lookup(t *testing.T, pkgPath, typ, field string) string {
	t.Helper()
	const module = "github.com/perfgate/perfgate/"
	if _, ok := d[pkgPath]; !ok {
		d[pkgPath] = map[string]map[string]string{}
		dir := filepath.Join("..", "..", strings.TrimPrefix(pkgPath, module))
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				m := map[string]string{}
				for _, fl := range st.Fields.List {
					text := fl.Doc.Text()
					if text == "" {
						text = fl.Comment.Text()
					}
					for _, name := range fl.Names {
						m[name.Name] = text
					}
				}
				d[pkgPath][ts.Name.Name] = m
				return true
			})
		}
	}
	return d[pkgPath][typ][field]
}

// oneParagraph turns a doc comment into one Markdown table cell.
func oneParagraph(s string) string {
	var p comment.Parser
	var pr comment.Printer
	md := string(pr.Markdown(p.Parse(s)))
	md = strings.Join(strings.Fields(md), " ")
	return strings.ReplaceAll(md, "|", `\|`)
}

// typeName prints a field's type as a user writes it in a file.
func typeName(t reflect.Type) string {
	switch t.String() {
	case "time.Duration", "record.Duration":
		return "duration (\"250ms\")"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of " + typeName(t.Key()) + " to " + typeName(t.Elem())
	case reflect.Struct:
		if t.String() == "distribution.Spec" {
			return "distribution spec (\"normal:128,20\")"
		}
		if !hasJSONFields(t) {
			return t.Name() + " (text)"
		}
		if t.Name() != "" {
			return "object (" + t.Name() + ")"
		}
		return "object"
	case reflect.Interface:
		return t.String()
	}
	if t.PkgPath() != "" && t.Name() != "" {
		return t.Name() + " (" + t.Kind().String() + ")"
	}
	return t.String()
}

type refRow struct{ key, typ, doc string }

// walk lists the file keys of struct type t (embedded structs flattened, as in files)
// and, after them, a section for every nested object type.
func walk(t *testing.T, docs fieldDocs, typ reflect.Type, prefix string, sections *[]string, seen map[reflect.Type]bool, out *bytes.Buffer) {
	var rows []refRow
	var nested []struct {
		key string
		t   reflect.Type
	}
	var add func(reflect.Type)
	add = func(st reflect.Type) {
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			name := strings.Split(tag, ",")[0]
			if name == "-" {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				add(ft)
				continue
			}
			if name == "" {
				name = f.Name
			}
			text := docs.lookup(t, st.PkgPath(), st.Name(), f.Name)
			rows = append(rows, refRow{name, typeName(f.Type), oneParagraph(text)})
			elem := ft
			for elem.Kind() == reflect.Slice || elem.Kind() == reflect.Map || elem.Kind() == reflect.Pointer {
				elem = elem.Elem()
			}
			if elem.Kind() == reflect.Struct && strings.HasPrefix(elem.PkgPath(), "github.com/perfgate/perfgate/") && !seen[elem] && hasJSONFields(elem) {
				seen[elem] = true
				nested = append(nested, struct {
					key string
					t   reflect.Type
				}{prefix + name, elem})
			}
		}
	}
	add(typ)
	fmt.Fprintf(out, "\n## %s\n\n", cmpOr(prefix, "top level"))
	out.WriteString("| key | type | meaning |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(out, "| `%s` | %s | %s |\n", r.key, r.typ, r.doc)
	}
	for _, n := range nested {
		walk(t, docs, n.t, n.key+".", sections, seen, out)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return strings.TrimSuffix(a, ".")
	}
	return b
}

// hasJSONFields reports whether a struct type is written as an object of fields (and not
// as text through its own marshaller, as distribution specs and durations are).
func hasJSONFields(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()) ||
		reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()) && t != reflect.TypeFor[Scenario]() {
		return false
	}
	return t.NumField() > 0
}

func scenarioReference(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# Scenario file reference\n\n")
	b.WriteString("<!-- Generated from the config types by perftest/scenario's TestScenarioReferenceCurrent; DO NOT EDIT.\n")
	b.WriteString("     Regenerate: go test ./perftest/scenario -run TestScenarioReferenceCurrent -update-scenario-doc -->\n\n")
	b.WriteString("Every key a scenario file (YAML or JSON, `perfgate profile --config`, `scenario.ReadFile`) may set,\n")
	b.WriteString("with the doc comment of the Go field it fills. Durations are Go duration text (`250ms`, `30s`);\n")
	b.WriteString("distributions are specs such as `normal:128,20` ([distribution.md](distribution.md)). The guide is\n")
	b.WriteString("[perftest.md](perftest.md).\n")
	seen := map[reflect.Type]bool{reflect.TypeFor[Scenario](): true}
	var sections []string
	walk(t, fieldDocs{}, reflect.TypeFor[Scenario](), "", &sections, seen, &b)
	return b.Bytes()
}

// TestScenarioReferenceCurrent fails when docs/scenario-reference.md is not what the
// config types say now. Regenerate with
// go test ./perftest/scenario -run TestScenarioReferenceCurrent -update-scenario-doc.
func TestScenarioReferenceCurrent(t *testing.T) {
	want := scenarioReference(t)
	if *updateRefDoc {
		if err := os.WriteFile(refDocPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(refDocPath)
	if err != nil {
		t.Fatalf("%v (generate it: go test ./perftest/scenario -run TestScenarioReferenceCurrent -update-scenario-doc)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/scenario-reference.md is stale: a config type changed; regenerate it with go test ./perftest/scenario -run TestScenarioReferenceCurrent -update-scenario-doc")
	}
}

// TestScenarioReferenceCoversFileKeys: every key the file checker knows at the top level
// is in the generated page, and every documented row has a meaning.
func TestScenarioReferenceCoversFileKeys(t *testing.T) {
	doc := string(scenarioReference(t))
	for _, key := range []string{"name", "tokenizer", "urls", "endpoint_type", "isl", "osl", "concurrency", "requests", "mock", "objectives"} {
		if !strings.Contains(doc, "| `"+key+"` |") {
			t.Errorf("the scenario reference has no row for %q", key)
		}
	}
	var empty []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `") && strings.HasSuffix(line, "|  |") {
			empty = append(empty, line)
		}
	}
	sort.Strings(empty)
	if len(empty) > 0 {
		t.Logf("fields without a doc comment (%d):\n%s", len(empty), strings.Join(empty, "\n"))
	}
}
