package examples_test

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// quickstartMarker precedes the README's quick start and names the file it is kept in.
var quickstartMarker = regexp.MustCompile("<!-- quickstart: (\\S+) [^\n]*-->\n```go\n")

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
	m := quickstartMarker.FindSubmatchIndex(readme)
	if m == nil {
		t.Fatal("README.md has no quick start block after a <!-- quickstart: FILE … --> marker")
	}
	body := readme[m[1]:]
	end := bytes.Index(body, []byte("\n```\n"))
	if end < 0 {
		t.Fatal("README.md: the quick start's ```go block is not closed")
	}
	code := append([]byte("// Code generated from README.md by examples_test's TestREADMEQuickStart; DO NOT EDIT.\n\n"), body[:end+1]...)
	if f, err := format.Source(code); err != nil || !bytes.Equal(f, code) {
		t.Errorf("README.md's quick start is not gofmt-formatted (or does not parse: %v)", err)
	}
	path := filepath.Join("..", string(readme[m[2]:m[3]]))
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
