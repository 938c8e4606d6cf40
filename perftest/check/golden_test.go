package check

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name.golden (rewriting it under -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name+".golden"), []byte(got), *update)
}
