// Command longtests lists the long tests of the module. They are the Test functions
// that call testutil.Long or testutil.Short, directly or through a function of their
// own package that does. `make test` runs the suite with -short, where those tests skip
// or run a trimmed size; `make test-long` (scripts/testlong.sh) runs exactly these at
// full size, so CI, which runs both, loses nothing.
//
//	go run ./scripts/longtests [DIR]
//
// It prints one line per package directory that has some: the directory and a -run
// pattern, `./tokenizer ^(TestA|TestB)$`.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := list(root, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "longtests:", err)
		os.Exit(2)
	}
}

// markers are the testutil functions that make a test long.
var markers = map[string]bool{"Long": true, "Short": true}

func list(root string, w io.Writer) error {
	dirs := map[string][]string{} // directory → its _test.go files
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")):
				return filepath.SkipDir
			case path != root && fileExists(filepath.Join(path, "go.mod")):
				return filepath.SkipDir // another module (testmod/external)
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		tests, err := longTests(dirs[dir])
		if err != nil {
			return err
		}
		if len(tests) > 0 {
			rel, _ := filepath.Rel(root, dir)
			fmt.Fprintf(w, "./%s ^(%s)$\n", filepath.ToSlash(rel), strings.Join(tests, "|"))
		}
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// longTests returns the sorted names of the Test functions in files (one package
// directory, both the package and its _test package) that reach a marker call.
func longTests(files []string) ([]string, error) {
	fset := token.NewFileSet()
	calls := map[string]map[string]bool{} // function → the package-level functions it calls
	marked := map[string]bool{}           // functions that call a marker directly
	var tests []string
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		testutil := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == "github.com/perfgate/perfgate/internal/testutil" {
				testutil = "testutil"
				if imp.Name != nil {
					testutil = imp.Name.Name
				}
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil {
				continue // methods: not followed
			}
			if strings.HasPrefix(name, "Test") && name != "TestMain" {
				tests = append(tests, name)
			}
			if calls[name] == nil {
				calls[name] = map[string]bool{}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					calls[name][fun.Name] = true
				case *ast.SelectorExpr:
					if x, ok := fun.X.(*ast.Ident); ok && testutil != "" && x.Name == testutil && markers[fun.Sel.Name] {
						marked[name] = true
					}
				}
				return true
			})
		}
	}
	// reaches: whether fn reaches a marked function through package-level calls.
	memo := map[string]bool{}
	var reaches func(fn string, seen map[string]bool) bool
	reaches = func(fn string, seen map[string]bool) bool {
		if v, ok := memo[fn]; ok {
			return v
		}
		if marked[fn] {
			return true
		}
		if seen[fn] {
			return false
		}
		seen[fn] = true
		for callee := range calls[fn] {
			if reaches(callee, seen) {
				memo[fn] = true
				return true
			}
		}
		return false
	}
	var long []string
	for _, t := range tests {
		if reaches(t, map[string]bool{}) {
			long = append(long, t)
		}
	}
	slices.Sort(long)
	return slices.Compact(long), nil
}
