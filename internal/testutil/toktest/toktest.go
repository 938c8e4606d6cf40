// Package toktest loads tokenizers for perfgate's own tests, once per test binary. It is
// apart from internal/testutil because the tokenizer package's tests use testutil, and
// testutil importing tokenizer would make a cycle. Only _test.go files import it.
package toktest

import (
	"sync"
	"testing"

	"github.com/perfgate/perfgate/tokenizer"
)

// loads caches one load per name for the whole test binary: built-ins are cheap to
// share, and a model file takes a second to parse.
var loads sync.Map // name → func() (*tokenizer.Tokenizer, error)

// Load returns the tokenizer name resolves to (tokenizer.Load), loaded once per test
// binary, and fails the test if it cannot be loaded.
func Load(t testing.TB, name string) *tokenizer.Tokenizer {
	t.Helper()
	load, _ := loads.LoadOrStore(name, sync.OnceValues(func() (*tokenizer.Tokenizer, error) { return tokenizer.Load(name) }))
	tok, err := load.(func() (*tokenizer.Tokenizer, error))()
	if err != nil {
		t.Fatalf("tokenizer.Load(%q): %v", name, err)
	}
	return tok
}
