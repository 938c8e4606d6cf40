// Command apicount counts the exported names of Go packages, and which are deprecated.
// It counts what a reader of their godoc meets: top-level types, functions, constants
// and variables, and the exported methods of exported types (not their fields, nor
// methods promoted from an embedded type), each marked deprecated when its doc comment
// has a "Deprecated:" paragraph. Test files are not read.
//
//	go run ./scripts/apicount ./perftest ./perftest/scenario
//
// prints one line per package: its exported names, how many of them are deprecated
// shims, and the rest (the API a newcomer is meant to learn), then, with -v, the names.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list the names")
	flag.Parse()
	if err := run(os.Stdout, flag.Args(), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, dirs []string, verbose bool) error {
	for _, dir := range dirs {
		names, err := exported(dir)
		if err != nil {
			return err
		}
		dep := 0
		for _, n := range names {
			if n.deprecated {
				dep++
			}
		}
		fmt.Fprintf(w, "%s: %d exported names, %d deprecated, %d current\n", dir, len(names), dep, len(names)-dep)
		if verbose {
			for _, n := range names {
				mark := ""
				if n.deprecated {
					mark = "  (deprecated)"
				}
				fmt.Fprintf(w, "    %s %s%s\n", n.kind, n.name, mark)
			}
		}
	}
	return nil
}

// name is one exported name of a package.
type name struct {
	kind, name string
	deprecated bool
}

// exported returns the exported names of the package in dir (its non-test files), sorted.
func exported(dir string) ([]name, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []name
	typeDeprecated := map[string]bool{}
	var methods []*ast.FuncDecl
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(file.Name.Name, "_test") || file.Name.Name == "main" {
			continue
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					methods = append(methods, d)
				} else if d.Name.IsExported() {
					out = append(out, name{"func", d.Name.Name, deprecated(d.Doc)})
				}
			case *ast.GenDecl:
				out = append(out, genNames(d, typeDeprecated)...)
			}
		}
	}
	for _, m := range methods {
		recv := recvName(m.Recv.List[0].Type)
		if !m.Name.IsExported() || !ast.IsExported(recv) {
			continue
		}
		out = append(out, name{"method", recv + "." + m.Name.Name, deprecated(m.Doc) || typeDeprecated[recv]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// genNames returns the exported types, constants and variables of d, and
// notes which types are deprecated.
func genNames(d *ast.GenDecl, typeDeprecated map[string]bool) []name {
	var out []name
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			dep := deprecated(d.Doc) && len(d.Specs) == 1 || deprecated(s.Doc)
			typeDeprecated[s.Name.Name] = dep
			out = append(out, name{"type", s.Name.Name, dep})
		case *ast.ValueSpec:
			kind := "var"
			if d.Tok == token.CONST {
				kind = "const"
			}
			for _, n := range s.Names {
				if n.IsExported() {
					out = append(out, name{kind, n.Name, deprecated(s.Doc) || len(d.Specs) == 1 && deprecated(d.Doc)})
				}
			}
		}
	}
	return out
}

// recvName is the type name of a method's receiver (T, *T, T[P]).
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// deprecated reports whether a doc comment has a "Deprecated: " paragraph, as go doc
// and staticcheck read it.
func deprecated(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, p := range strings.Split(doc.Text(), "\n\n") {
		if strings.HasPrefix(p, "Deprecated: ") {
			return true
		}
	}
	return false
}
