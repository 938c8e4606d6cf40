package depstest

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	// importsOnly is a doc comment's claim of what its package imports, up to the end
	// of the clause: "imports only the standard library and [record]".
	importsOnly = regexp.MustCompile(`imports only ([^.;:(—]+)`)
	// importsNot is a claim of what it does not import, directly or not:
	// `does not import "testing"`, `does not import [loadgen]`.
	importsNot = regexp.MustCompile(`does not import ("[^"]+"|\[?[a-z][a-z0-9/]*\]?)`)
	listSep    = regexp.MustCompile(`,\s*(?:and\s+)?|\s+and\s+`)
)

// claimErrors checks what a package's doc comment (text) claims it imports against
// what go list says it does: imports (direct, import paths) and deps (direct or not).
// "imports only A, B and C" must name exactly the module packages it imports
// (relative to the module; "the standard library" stands for itself) and it may
// import nothing from outside the standard library; "does not import X" must hold.
// known reports whether a relative path is a package of the module.
func claimErrors(text string, imports, deps []string, known func(string) bool) []string {
	text = strings.Join(strings.Fields(text), " ")
	var errs []string
	for _, m := range importsOnly.FindAllStringSubmatch(text, -1) {
		claimed := map[string]bool{}
		for _, item := range listSep.Split(strings.TrimSpace(m[1]), -1) {
			item = strings.Trim(strings.TrimPrefix(item, "package "), "[]`")
			switch {
			case item == "the standard library":
			case known(item):
				claimed[item] = true
			default:
				errs = append(errs, fmt.Sprintf("%q: %q is neither the standard library nor a package of the module (write the claim as \"imports only A, B and C\", then a new sentence)", m[0], item))
			}
		}
		var mine, third []string
		for _, imp := range imports {
			if r, ok := rel(imp); ok {
				mine = append(mine, r)
			} else if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				third = append(third, imp)
			}
		}
		var missing, extra []string
		for _, r := range mine {
			if !claimed[r] {
				extra = append(extra, r)
			}
		}
		for c := range claimed {
			if !slices.Contains(mine, c) {
				missing = append(missing, c)
			}
		}
		slices.Sort(missing)
		if len(extra)+len(missing)+len(third) > 0 {
			errs = append(errs, fmt.Sprintf("%q, but it imports %v from the module (not claimed: %v; claimed, not imported: %v) and %v from outside it", m[0], mine, extra, missing, third))
		}
	}
	for _, m := range importsNot.FindAllStringSubmatch(text, -1) {
		p := strings.Trim(m[1], `"[]`)
		if known(p) {
			p = module + "/" + p
		}
		if slices.Contains(deps, p) {
			errs = append(errs, fmt.Sprintf("%q, but it depends on %s", m[0], p))
		}
	}
	return errs
}

// docText is the package comment of the files in dir.
func docText(dir string, files []string) (string, error) {
	fset := token.NewFileSet()
	var b strings.Builder
	for _, f := range files {
		af, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return "", err
		}
		if af.Doc != nil {
			b.WriteString(af.Doc.Text())
		}
	}
	return b.String(), nil
}

// TestDocImportClaims: what a package's doc comment says it imports ("It imports only
// record and distribution", "does not import \"testing\"") is what go list finds, so
// the prose cannot drift from the graph. The graph itself is the allowlist above.
func TestDocImportClaims(t *testing.T) {
	pkgs := listPackages(t)
	known := map[string]bool{}
	for _, p := range pkgs {
		if r, ok := rel(p.ImportPath); ok {
			known[r] = true
		}
	}
	claims := 0
	for _, p := range pkgs {
		r, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		text, err := docText(p.Dir, p.GoFiles)
		if err != nil {
			t.Fatal(err)
		}
		claims += len(importsOnly.FindAllString(text, -1)) + len(importsNot.FindAllString(text, -1))
		for _, e := range claimErrors(text, p.Imports, p.Deps, func(s string) bool { return known[s] }) {
			t.Errorf("%s's doc comment says %s", r, e)
		}
	}
	if claims == 0 {
		t.Error("no doc comment claims what its package imports; the claims' pattern no longer matches them")
	}
}

// A claim that names a package not imported, leaves one out, hides a third-party
// import, names something that is not a package, or denies an import that is there,
// is reported; true claims are not.
func TestDocImportClaimsFail(t *testing.T) {
	known := func(s string) bool {
		return slices.Contains([]string{"record", "distribution", "metric", "loadgen"}, s)
	}
	imp := func(rs ...string) []string {
		var out []string
		for _, r := range rs {
			if strings.Contains(r, ".") || !strings.Contains(r, "/") && !known(r) {
				out = append(out, r)
			} else {
				out = append(out, module+"/"+r)
			}
		}
		return out
	}
	for _, c := range []struct {
		text    string
		imports []string
		want    string // "" = no error
	}{
		{"It imports only record and\ndistribution. More.", imp("record", "distribution", "fmt"), ""},
		{"It imports only the standard library and [record]; it does not fit.", imp("record", "strings"), ""},
		{"The package imports only the standard library. Process groups.", imp("os"), ""},
		{"It imports only record and distribution.", imp("record", "distribution", "metric"), "not claimed: [metric]"},
		{"It imports only record, metric and distribution.", imp("record", "distribution"), "claimed, not imported: [metric]"},
		{"It imports only the standard library.", imp("gonum.org/v1/gonum/stat"), "[gonum.org/v1/gonum/stat] from outside it"},
		{"it imports only the standard library, and holds data.", imp("os"), `"holds data" is neither the standard library nor a package`},
		{`The package does not import "testing": perftest does.`, imp("fmt"), `but it depends on testing`},
		{"It does not import [loadgen].", imp("record"), "depends on " + module + "/loadgen"},
		{`The package does not import "testing".`, imp("os"), ""},
	} {
		deps := append(slices.Clone(c.imports), "testing", module+"/loadgen")
		if c.want == "" {
			deps = c.imports
		}
		errs := claimErrors(c.text, c.imports, deps, known)
		got := strings.Join(errs, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("claimErrors(%q, %v) = %q; want %q", c.text, c.imports, got, c.want)
		}
	}
}
