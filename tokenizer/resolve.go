package tokenizer

import "fmt"

// Load returns the tokenizer called name. name may be a built-in name (see [Builtins]).
// (Files, directories and Hugging Face Hub ids: being added.)
func Load(name string) (*Tokenizer, error) {
	if _, ok := builtinFiles[name]; ok {
		return Builtin(name)
	}
	return nil, fmt.Errorf("tokenizer: cannot load %q: not a built-in (have %v)", name, Builtins())
}
