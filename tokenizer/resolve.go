package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Options controls [LoadWith]. The zero value loads as [Load] does.
type Options struct {
	// Backend picks the implementation of tokenizer.json files: "" (the value of
	// $PERFGATE_TOKENIZER_BACKEND, else "go"), "go" (this package's pure-Go pipeline) or
	// "hf" (Hugging Face's Rust library through github.com/daulet/tokenizers; only in
	// binaries built with -tags hftokenizers). Built-ins and tiktoken files are always Go.
	Backend string

	// Revision of a Hub model: a branch, tag or commit hash. "" means "main", or the
	// part after "@" in a name like "org/model@v1.0".
	Revision string

	// Endpoint is the Hub's base URL; "" means $HF_ENDPOINT, else https://huggingface.co.
	Endpoint string

	// Token is sent as "Authorization: Bearer …" to the Hub (never logged or put in
	// errors); "" means $HF_TOKEN.
	Token string

	// CacheDir is the Hugging Face hub cache (models--org--name/…); "" means
	// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
	// ~/.cache/huggingface/hub.
	CacheDir string

	// Offline forbids downloads; false means the value of $HF_HUB_OFFLINE (1/true/yes/on).
	Offline bool

	// HTTPClient makes the Hub requests; nil means a client with a 60 s timeout.
	HTTPClient *http.Client
}

// Load returns the tokenizer called name, trying in order:
//
//  1. a built-in name ([Builtins]: "gpt2", "cl100k_base", "o200k_base", …);
//  2. a file: a tokenizer.json, or a tiktoken vocabulary (*.tiktoken, tiktoken.model);
//  3. a directory holding tokenizer.json, or tiktoken.model / *.tiktoken, with its
//     tokenizer_config.json (chat template, special tokens) beside it;
//  4. a Hugging Face Hub model id "org/name" (optionally "org/name@revision"): first the
//     local Hugging Face cache (HF_HUB_CACHE / HF_HOME, snapshots and refs as
//     huggingface_hub lays them out), then a download from the Hub (HF_ENDPOINT,
//     HF_TOKEN) into that cache, unless HF_HUB_OFFLINE=1.
//
// If nothing works, the error lists every place tried. Load is [LoadWith] with zero
// [Options].
func Load(name string) (*Tokenizer, error) { return LoadWith(name, Options{}) }

// LoadWith is [Load] with options.
func LoadWith(name string, opts Options) (*Tokenizer, error) {
	if _, ok := builtinFiles[name]; ok {
		return Builtin(name)
	}
	var tried []string
	tried = append(tried, fmt.Sprintf("built-in: not one of %s", strings.Join(Builtins(), ", ")))
	switch fi, err := os.Stat(name); {
	case err == nil && fi.IsDir():
		return loadDir(name, name, opts)
	case err == nil:
		return loadFile(name, name, opts)
	case errors.Is(err, fs.ErrNotExist):
		tried = append(tried, fmt.Sprintf("file or directory %s: does not exist", name))
	default:
		tried = append(tried, fmt.Sprintf("file or directory %s: %v", name, err))
	}
	repo, rev, ok := parseHubID(name)
	if !ok {
		tried = append(tried, "Hugging Face Hub: not a model id of the form org/name[@revision]")
		return nil, notFound(name, tried)
	}
	if opts.Revision != "" {
		rev = opts.Revision
	}
	tok, hubTried, err := loadHub(name, repo, rev, opts)
	if err != nil {
		return nil, err
	}
	if tok != nil {
		return tok, nil
	}
	return nil, notFound(name, append(tried, hubTried...))
}

func notFound(name string, tried []string) error {
	return fmt.Errorf("tokenizer: cannot load %q; tried:\n  - %s", name, strings.Join(tried, "\n  - "))
}

// hubIDPattern is huggingface_hub's repo id syntax: an optional namespace and a name of
// letters, digits, '-', '_' and '.'.
var hubIDPattern = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*/)?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func parseHubID(name string) (repo, rev string, ok bool) {
	repo, rev, _ = strings.Cut(name, "@")
	if !hubIDPattern.MatchString(repo) || strings.Contains(repo, "..") || strings.Contains(repo, "--") || !strings.Contains(repo, "/") {
		return "", "", false
	}
	return repo, rev, true
}

// LoadFile loads a tokenizer.json file or a tiktoken vocabulary (*.tiktoken,
// tiktoken.model; see [Load]). A file named tokenizer.json or a tiktoken vocabulary also
// takes the chat template and special-token settings from the files beside it.
func LoadFile(path string) (*Tokenizer, error) { return loadFile(path, path, Options{}) }

// LoadDir loads the tokenizer in a model directory: tokenizer.json, else tiktoken.model
// or a single *.tiktoken, with tokenizer_config.json, chat_template.jinja,
// special_tokens_map.json and generation_config.json where present.
func LoadDir(dir string) (*Tokenizer, error) { return loadDir(dir, dir, Options{}) }

func loadDir(name, dir string, opts Options) (*Tokenizer, error) {
	if p := filepath.Join(dir, "tokenizer.json"); isFile(p) {
		return loadFile(name, p, opts)
	}
	if p := filepath.Join(dir, "tiktoken.model"); isFile(p) {
		return loadFile(name, p, opts)
	}
	tt, _ := filepath.Glob(filepath.Join(dir, "*.tiktoken"))
	if len(tt) == 1 {
		return loadFile(name, tt[0], opts)
	}
	if len(tt) > 1 {
		return nil, fmt.Errorf("tokenizer: directory %s holds %d *.tiktoken files; name one", dir, len(tt))
	}
	return nil, fmt.Errorf("tokenizer: directory %s has no tokenizer.json, tiktoken.model or *.tiktoken", dir)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// tiktokenLine matches the first line of a tiktoken vocabulary.
var tiktokenLine = regexp.MustCompile(`^[A-Za-z0-9+/]+=* [0-9]+\r?\n`)

func loadFile(name, path string, opts Options) (*Tokenizer, error) {
	tiktoken := strings.HasSuffix(path, ".tiktoken")
	if strings.HasSuffix(path, ".model") {
		// Meta's original Llama-3 tokenizer.model is a tiktoken file; a SentencePiece
		// .model is binary.
		head := make([]byte, 256)
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		n, _ := io.ReadFull(f, head)
		f.Close()
		if !tiktokenLine.Match(head[:n]) {
			return nil, fmt.Errorf("tokenizer: %s is not a tiktoken vocabulary (SentencePiece .model files are not supported; use the model's tokenizer.json)", path)
		}
		tiktoken = true
	}
	if tiktoken {
		tok, err := loadTiktokenFile(name, path)
		if err != nil {
			return nil, err
		}
		if err := attachChat(tok, filepath.Dir(path)); err != nil {
			return nil, err
		}
		return tok, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	b, err := newBackend(data, path, opts.Backend)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	tok := &Tokenizer{name: name, source: path, digest: hex.EncodeToString(sum[:]), b: b}
	if filepath.Base(path) == "tokenizer.json" {
		if err := attachChat(tok, filepath.Dir(path)); err != nil {
			return nil, err
		}
	}
	return tok, nil
}

// attachChat loads the chat template and special-token strings from dir, if any.
func attachChat(tok *Tokenizer, dir string) error {
	c, err := loadChatConfig(dir)
	if err != nil {
		return err
	}
	tok.chat = c
	return nil
}

// newBackend builds the backend of a tokenizer.json with the chosen implementation.
func newBackend(data []byte, path, which string) (backend, error) {
	if which == "" {
		which = os.Getenv("PERFGATE_TOKENIZER_BACKEND")
	}
	switch which {
	case "", "go":
		return newHFBackend(data, path)
	case "hf":
		if newRustBackend == nil {
			return nil, errors.New(`tokenizer: backend "hf" needs a binary built with -tags hftokenizers (see the README)`)
		}
		return newRustBackend(data, path)
	}
	return nil, fmt.Errorf("tokenizer: unknown backend %q (want go or hf)", which)
}

// newRustBackend is set by hftokenizers.go when built with -tags hftokenizers.
var newRustBackend func(data []byte, path string) (backend, error)
