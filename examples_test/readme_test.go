package examples_test

import (
	"bytes"
	"errors"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quickstartMarker precedes the README's quick start and names the file it is kept in.
var quickstartMarker = regexp.MustCompile("<!-- quickstart: (\\S+) [^\n]*-->\n```go\n")

// quickstart extracts the README's quick start: the file it is kept in (relative to the
// repository root) and that file's content.
func quickstart(readme []byte) (path string, code []byte, err error) {
	m := quickstartMarker.FindSubmatchIndex(readme)
	if m == nil {
		return "", nil, errors.New("README.md has no quick start block after a <!-- quickstart: FILE … --> marker")
	}
	body := readme[m[1]:]
	end := bytes.Index(body, []byte("\n```\n"))
	if end < 0 {
		return "", nil, errors.New("README.md: the quick start's ```go block is not closed")
	}
	code = append([]byte("// Code generated from README.md by examples_test's TestREADMEQuickStart; DO NOT EDIT.\n\n"), body[:end+1]...)
	if f, err := format.Source(code); err != nil || !bytes.Equal(f, code) {
		return "", nil, errors.New("README.md's quick start does not parse or is not gofmt-formatted")
	}
	return string(readme[m[2]:m[3]]), code, nil
}

// TestREADMEQuickStart checks that the README's quick start, as written, is the test
// file testmod/external/quickstart/quickstart_test.go, which `make test` builds and
// runs in a module outside perfgate (its own go.mod, a replace directive): so the quick
// start compiles for a user. Rewrite the file from the README with
// `go test ./examples_test -run TestREADMEQuickStart -update`.
func TestREADMEQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rel, code, err := quickstart(readme)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", rel)
	if *update {
		if err := os.WriteFile(path, code, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, code) {
		t.Errorf("%s is not README.md's quick start (err %v); run go test ./examples_test -run TestREADMEQuickStart -update", path, err)
	}
}

// A README without the marker, with an unclosed block or with code gofmt would change
// is refused.
func TestREADMEQuickStartRefuses(t *testing.T) {
	const marker = "<!-- quickstart: x/y_test.go (kept in sync) -->\n```go\n"
	for readme, want := range map[string]string{
		"# perfgate\n":                            "no quick start block",
		marker + "package x\n":                    "not closed",
		marker + "package x\nfunc  F() {}\n```\n": "not gofmt-formatted",
	} {
		if _, _, err := quickstart([]byte(readme)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("quickstart(%q) = %v; want an error saying %q", readme, err, want)
		}
	}
	if p, code, err := quickstart([]byte(marker + "package x\n```\n")); err != nil || p != "x/y_test.go" || !strings.HasSuffix(string(code), "\npackage x\n") {
		t.Errorf("quickstart(good) = %q, %q, %v", p, code, err)
	}
}
