package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCount: exported top-level names and methods of exported types are counted,
// unexported ones, fields and test files are not, and a "Deprecated:" paragraph (on
// the name, or on its type for a method) marks a shim.
func TestCount(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// A is current.
type A struct{ Field int }

// M is a method.
func (A) M() {}

func (A) m() {}

// Old is a shim.
//
// Deprecated: use A.
type Old = A

// N is Old's method, deprecated with its type.
func (*Old) N() {}

// F is a function whose doc only mentions Deprecated: in passing.
func F() {}

// G is old.
//
// Deprecated: use F.
func G() {}

const (
	C = 1 // C is current.
	c = 2
)

var V, w int
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc TestX() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := run(&b, []string{dir}, true); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, line := range []string{dir + ": 8 exported names, 3 deprecated, 5 current", "func G  (deprecated)", "method Old.N  (deprecated)", "type Old  (deprecated)", "method A.M\n", "const C\n", "var V\n", "func F\n", "type A\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("output lacks %q:\n%s", line, got)
		}
	}
	for _, bad := range []string{"Field", "TestX", " m\n", " c\n", " w\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("output counts %q:\n%s", bad, got)
		}
	}
}
