// Package docstest keeps the hand-written documentation true to the code: the layout
// tables come from the packages' doc comments, and every file a page names exists.
package docstest

import (
	"bytes"
	"flag"
	"fmt"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md and docs/*.md")

// root is the repository root, seen from this package's directory.
const root = "../.."

// maxRow is the longest first sentence of a doc comment, in characters, that still
// reads as one row of a layout table; the detail goes in the sentences after it.
const maxRow = 160

// pkgDoc is one package of the module, as the layout tables show it.
type pkgDoc struct {
	dir      string // slash-separated, relative to the repository root
	name     string
	synopsis string // the doc comment's first sentence, "Package NAME " cut off
	testOnly bool   // only _test.go files (a test-only package)
}

// row is what a layout table says a package does: its synopsis without a leading
// "is " and the final period.
func (p pkgDoc) row() string {
	s := strings.TrimSuffix(strings.TrimPrefix(p.synopsis, "is "), ".")
	return strings.ReplaceAll(s, "|", `\|`)
}

// packages lists the module's packages under dir (nested modules, testdata and
// hidden directories left out), sorted by directory. A package without a doc comment,
// or whose comment does not start "Package NAME" ("Command NAME" for a main package)
// or whose first sentence is too long to be a row, is an error naming its directory.
func packages(dir string) ([]pkgDoc, error) {
	var pkgs []pkgDoc
	var errs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir {
			n := d.Name()
			if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "node_modules" || n == "vendor" {
				return fs.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return fs.SkipDir // another module
			}
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		p, ok, err := readPackage(path)
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case ok:
			p.dir = filepath.ToSlash(rel)
			if e := p.check(); e != "" {
				errs = append(errs, p.dir+"/: "+e)
			}
			pkgs = append(pkgs, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return pkgs, nil
}

// readPackage reads the package in dir from its files' package clauses and comments
// (the non-test files' doc comment, or for a test-only package the test files'); ok
// is false when dir holds no Go file that builds here.
func readPackage(dir string) (p pkgDoc, ok bool, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return p, false, err
	}
	var files, tests []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") {
			continue
		}
		if m, err := build.Default.MatchFile(dir, n); err != nil || !m {
			continue
		}
		if strings.HasSuffix(n, "_test.go") {
			tests = append(tests, n)
		} else {
			files = append(files, n)
		}
	}
	if len(files) == 0 && len(tests) == 0 {
		return p, false, nil
	}
	p.testOnly = len(files) == 0
	if p.testOnly {
		files = tests
	}
	// doc.go first: where a package keeps its comment by convention.
	slices.SortStableFunc(files, func(a, b string) int {
		if a == "doc.go" || b == "doc.go" {
			return map[bool]int{true: -1, false: 1}[a == "doc.go"]
		}
		return strings.Compare(a, b)
	})
	fset := token.NewFileSet()
	var text string
	for _, n := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return p, false, err
		}
		if p.name == "" || !strings.HasSuffix(f.Name.Name, "_test") {
			p.name = f.Name.Name
		}
		if text == "" && f.Doc != nil {
			text = f.Doc.Text()
		}
	}
	p.synopsis = new(doc.Package).Synopsis(text)
	return p, true, nil
}

// check says what is wrong with p's doc comment as a layout row ("" if nothing), and
// cuts "Package NAME " off its synopsis.
func (p *pkgDoc) check() string {
	word := "Package"
	if p.name == "main" {
		word = "Command"
	}
	if p.synopsis == "" {
		return fmt.Sprintf("no doc comment; write one whose first sentence says what the package does (%q)", word+" NAME …")
	}
	rest, ok := strings.CutPrefix(p.synopsis, word+" ")
	name, rest, _ := strings.Cut(rest, " ")
	if !ok || (p.name != "main" && name != p.name && name != strings.TrimSuffix(p.name, "_test")) {
		return fmt.Sprintf("the doc comment starts %q; it should start %q", p.synopsis[:min(len(p.synopsis), 40)], word+" "+map[bool]string{true: "NAME", false: p.name}[p.name == "main"]+" ")
	}
	if n := utf8.RuneCountInString(rest); n > maxRow {
		return fmt.Sprintf("the doc comment's first sentence is %d characters after %q; a layout row takes at most %d: end the sentence sooner and put the detail in the next one:\n\t%s", n, word+" "+name, maxRow, p.synopsis)
	}
	p.synopsis = rest
	return ""
}

// readmeRow reports whether a package has a row in README.md's table: the packages
// a user imports or runs. internal/ packages, benchmarks, scripts and test-only
// packages are in docs/development.md's.
func (p pkgDoc) readmeRow() bool {
	first, _, _ := strings.Cut(p.dir, "/")
	return !p.testOnly && first != "internal" && first != "bench" && first != "scripts" &&
		!strings.Contains(p.dir, "/internal/") && (p.name != "main" || first == "cmd")
}

// layoutTable renders the packages pick keeps as a Markdown table, one row per package.
func layoutTable(pkgs []pkgDoc, pick func(pkgDoc) bool) string {
	var b strings.Builder
	b.WriteString("| package | what it does |\n|---|---|\n")
	for _, p := range pkgs {
		if pick(p) {
			fmt.Fprintf(&b, "| `%s/` | %s |\n", p.dir, p.row())
		}
	}
	return b.String()
}

// generated is one generated part of a Markdown file: the text between begin and
// end markers.
type generated struct {
	file  string // relative to the repository root
	begin string // the marker line before the text (without its newline)
	text  string
}

// layoutParts are the two layout tables: README.md's (the packages a user imports or
// runs) and docs/development.md's (every package).
func layoutParts(pkgs []pkgDoc) []generated {
	const how = " (generated from the packages' doc comments by `go test ./internal/docstest -run TestLayout -update`; do not edit) -->"
	return []generated{
		{"README.md", "<!-- layout:begin" + how, layoutTable(pkgs, pkgDoc.readmeRow)},
		{"docs/development.md", "<!-- layout:begin" + how, layoutTable(pkgs, func(pkgDoc) bool { return true })},
	}
}

const layoutEnd = "<!-- layout:end -->"

// splice returns doc with the text between g's markers replaced by g.text, and the
// text that was there.
func splice(doc []byte, g generated, end string) (out []byte, old string, err error) {
	begin := []byte(g.begin + "\n")
	i := bytes.Index(doc, begin)
	if i < 0 {
		return nil, "", fmt.Errorf("%s: no line %q to put the generated text after", g.file, g.begin)
	}
	j := bytes.Index(doc[i:], []byte(end+"\n"))
	if j < 0 {
		return nil, "", fmt.Errorf("%s: no %q after %q", g.file, end, g.begin)
	}
	body := doc[i+len(begin) : i+j]
	out = slices.Concat(doc[:i+len(begin)], []byte(g.text), doc[i+j:])
	return out, string(body), nil
}

// stale compares each part with its file under dir and returns what differs, each
// with its diff; with write it rewrites the stale files instead.
func stale(dir string, parts []generated, end string, write bool) ([]string, error) {
	var out []string
	for _, g := range parts {
		path := filepath.Join(dir, g.file)
		doc, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		spliced, old, err := splice(doc, g, end)
		if err != nil {
			return nil, err
		}
		if old == g.text {
			continue
		}
		if write {
			if err := os.WriteFile(path, spliced, 0o644); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, g.file+" is stale:\n"+lineDiff(old, g.text))
	}
	return out, nil
}

// checkGenerated fails t for each part that is not what its file holds (under
// -update it rewrites the file instead); cmd is the command that regenerates them.
func checkGenerated(t *testing.T, parts []generated, end, cmd string) {
	t.Helper()
	msgs, err := stale(root, parts, end, *update)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		t.Errorf("%s\nregenerate: %s", m, cmd)
	}
}

// lineDiff lists the lines only in got (-) and only in want (+).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("-" + l + "\n")
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("+" + l + "\n")
		}
	}
	return b.String()
}

// TestLayout: the layout tables of README.md and docs/development.md are the
// packages' doc comments, so a new package, a removed one or a changed comment shows
// up here until the tables are regenerated.
func TestLayout(t *testing.T) {
	pkgs, err := packages(root)
	if err != nil {
		t.Fatalf("package doc comments:\n%v", err)
	}
	checkGenerated(t, layoutParts(pkgs), layoutEnd, "go test ./internal/docstest -run TestLayout -update")
}
