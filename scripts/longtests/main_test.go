package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestList(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		// Direct calls, a call through a helper (two deep), a test that calls neither,
		// and a renamed import.
		"a/a_test.go": `package a
import "github.com/perfgate/perfgate/internal/testutil"
func TestDirect(t *testing.T) { if testutil.Short() { return } }
func TestLongMark(t *testing.T) { testutil.Long(t) }
func TestViaHelper(t *testing.T) { helper(t) }
func helper(t *testing.T) { deeper() }
func deeper() { _ = testutil.Short() }
func TestPlain(t *testing.T) { _ = testutil.CacheDir() }
`,
		"a/b_test.go": `package a_test
import tu "github.com/perfgate/perfgate/internal/testutil"
func TestRenamed(t *testing.T) { tu.Long(t) }
func TestOther(t *testing.T) {}
`,
		// A package without long tests, a Short of another package, and another module.
		"b/b_test.go": `package b
import "testing"
func TestShortOfTesting(t *testing.T) { if testing.Short() { t.Skip() } }
`,
		"mod/go.mod":           "module x\n",
		"mod/m/m_test.go":      "package m\nimport \"github.com/perfgate/perfgate/internal/testutil\"\nfunc TestM(t *testing.T) { testutil.Long(t) }\n",
		"c/testdata/x_test.go": "package x\nimport \"github.com/perfgate/perfgate/internal/testutil\"\nfunc TestX(t *testing.T) { testutil.Long(t) }\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := list(root, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "./a ^(TestDirect|TestLongMark|TestRenamed|TestViaHelper)$\n"; got != want {
		t.Errorf("list:\n%s\nwant:\n%s", got, want)
	}
}

func TestListBadFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "x_test.go"), []byte("package x\nfunc {"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := list(root, &out); err == nil {
		t.Errorf("a file that does not parse: no error; printed %q", out.String())
	}
}
