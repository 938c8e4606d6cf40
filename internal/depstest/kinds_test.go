package depstest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// kindFacts is the package that holds the facts about each API kind both sides share
// (its names, paths and headers); it alone may compare kind names.
const kindFacts = "internal/openai"

// kindNames returns the API kind names and the Go names of the constants that hold
// them: internal/openai's Kind… constants, and every constant anywhere whose value is
// one of those (loadgen's Endpoint… constants).
func kindNames(t *testing.T, files map[string]*ast.File) (names map[string]bool, consts map[string]bool) {
	names, consts = map[string]bool{}, map[string]bool{}
	for path, f := range files {
		if filepath.Dir(path) != kindFacts {
			continue
		}
		eachConst(f, func(name string, v ast.Expr) {
			if lit, ok := v.(*ast.BasicLit); ok && strings.HasPrefix(name, "Kind") && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				names[s], consts[name] = true, true
			}
		})
	}
	if len(names) < 5 {
		t.Fatalf("found %d API kinds in %s's Kind… constants, want them all", len(names), kindFacts)
	}
	for _, f := range files {
		eachConst(f, func(name string, v ast.Expr) {
			if sel, ok := v.(*ast.SelectorExpr); ok && consts[sel.Sel.Name] {
				consts[name] = true
			}
		})
	}
	return names, consts
}

func eachConst(f *ast.File, fn func(name string, v ast.Expr)) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					fn(n.Name, vs.Values[i])
				}
			}
		}
	}
}

// kindComparisons returns, as FILE:LINE: text, every == or != and every switch case
// in files (outside internal/openai) that compares with an API kind: its name as a
// string literal or a constant holding it.
func kindComparisons(fset *token.FileSet, files map[string]*ast.File, names, consts map[string]bool) []string {
	isKind := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(x.Value)
			return x.Kind == token.STRING && err == nil && names[s]
		case *ast.Ident:
			return consts[x.Name]
		case *ast.SelectorExpr:
			return consts[x.Sel.Name]
		}
		return false
	}
	var out []string
	for path, f := range files {
		if filepath.Dir(path) == kindFacts {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if (x.Op == token.EQL || x.Op == token.NEQ) && (isKind(x.X) || isKind(x.Y)) {
					out = append(out, fmt.Sprintf("%s: %s", fset.Position(x.Pos()), types(x)))
				}
			case *ast.CaseClause:
				for _, e := range x.List {
					if isKind(e) {
						out = append(out, fmt.Sprintf("%s: case %s", fset.Position(e.Pos()), types(e)))
					}
				}
			}
			return true
		})
	}
	return out
}

// types renders a small expression for a message.
func types(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.BinaryExpr:
		return types(x.X) + " " + x.Op.String() + " " + types(x.Y)
	case *ast.BasicLit:
		return x.Value
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return types(x.X) + "." + x.Sel.Name
	}
	return "…"
}

// parseModule parses every non-test Go file of the module (root: this repository).
func parseModule(t *testing.T, root string) (*token.FileSet, map[string]*ast.File) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

// TestNoKindComparisons: no code outside internal/openai compares with an API kind by
// name (`c.Endpoint == "chat"`, `case loadgen.EndpointMessages:`). What differs between
// kinds is a fact of the kind: a method of its adapter (loadgen/adapter.go), of the
// mock's kind type (mockserver), a fact in internal/openai, or a field the client
// writes into the record, so adding a kind never means finding every comparison.
func TestNoKindComparisons(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	fset, files := parseModule(t, root)
	names, consts := kindNames(t, files)
	if bad := kindComparisons(fset, files, names, consts); len(bad) > 0 {
		t.Errorf("comparisons with an API kind outside %s (make the difference a fact of the kind: its adapter, the mock's kind type, %s, or a record field):\n%s",
			kindFacts, kindFacts, strings.Join(bad, "\n"))
	}
}

// TestKindComparisonsFound: the scan finds each form of comparison it forbids, and
// not a comparison with another string.
func TestKindComparisonsFound(t *testing.T) {
	src := `package p
const EndpointChat Endpoint = openai.KindChat
func f(c rec, e Endpoint) {
	if c.Endpoint == "chat" {}
	if "messages" != c.Endpoint {}
	if e == EndpointChat {}
	if c.Endpoint == openai.KindRerank {}
	switch c.Endpoint { case "completions", "other": }
	if c.Endpoint == "chatty" {}
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p/p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := parser.ParseFile(fset, kindFacts+"/api.go", `package openai
const (KindChat = "chat"; KindCompletions = "completions"; KindMessages = "messages"; KindRerank = "rerank"; KindEmbeddings = "embeddings")
func g(k string) bool { return k == KindChat }`, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{"p/p.go": f, kindFacts + "/api.go": facts}
	names, consts := kindNames(t, files)
	got := kindComparisons(fset, files, names, consts)
	want := []string{`c.Endpoint == "chat"`, `"messages" != c.Endpoint`, `e == EndpointChat`, `c.Endpoint == openai.KindRerank`, `case "completions"`}
	if len(got) != len(want) {
		t.Fatalf("found %d comparisons, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasSuffix(got[i], w) {
			t.Errorf("comparison %d = %s, want one ending %s", i, got[i], w)
		}
	}
}
