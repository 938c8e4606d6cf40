package tokenizer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeHub imitates the Hugging Face Hub's /{repo}/resolve/{revision}/{file} endpoint:
// public, gated and renamed repos, 404 for missing files, X-Repo-Commit and ETag headers,
// and large files redirected to a separate "CDN" host.
type fakeHub struct {
	hub, cdn *httptest.Server
	mu       sync.Mutex
	requests []string          // "host-kind path auth" of every request
	files    map[string]string // "repo/file" → content
}

const (
	fakeCommit  = "0123456789abcdef0123456789abcdef01234567"
	fakeCommit2 = "89abcdef0123456789abcdef0123456789abcdef"
	fakeToken   = "hf_secret_token_value"
)

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	f := &fakeHub{files: map[string]string{}}
	vocab := tinyTiktoken()
	for _, repo := range []string{"acme/tiny", "acme/gated"} {
		f.files[repo+"/tiktoken.model"] = vocab
		f.files[repo+"/tokenizer_config.json"] = `{"added_tokens_decoder": {"300": {"content": "<|eot|>", "special": true}}, "pat_str": "[a-z]+|[0-9]|\\s+|."}`
	}
	f.cdn = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.log("cdn", r)
		body, ok := f.files[strings.TrimPrefix(r.URL.Path, "/blob/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"cdn-etag-differs"`)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(f.cdn.Close)
	f.hub = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.log("hub", r)
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
		if len(parts) != 5 || parts[2] != "resolve" {
			http.NotFound(w, r)
			return
		}
		repo, rev, file := parts[0]+"/"+parts[1], parts[3], parts[4]
		if repo == "acme/old-name" { // a renamed repo: relative redirect on the same host
			http.Redirect(w, r, "/acme/tiny/resolve/"+rev+"/"+file, http.StatusTemporaryRedirect)
			return
		}
		if repo == "acme/gated" && r.Header.Get("Authorization") != "Bearer "+fakeToken {
			w.Header().Set("X-Error-Message", "Access to model acme/gated is restricted.")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if repo == "acme/broken" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		commit := map[string]string{"main": fakeCommit, "v2": fakeCommit2, fakeCommit: fakeCommit, fakeCommit2: fakeCommit2}[rev]
		body, ok := f.files[repo+"/"+file]
		if commit == "" || !ok {
			w.Header().Set("X-Error-Code", "EntryNotFound")
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", commit)
		etag := fmt.Sprintf("%x", len(body)*7919+len(file))
		if file == "tiktoken.model" { // large file: the Hub answers with a redirect to its CDN
			w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
			http.Redirect(w, r, f.cdn.URL+"/blob/"+repo+"/"+file, http.StatusFound)
			return
		}
		w.Header().Set("ETag", `"`+etag+`"`)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(f.hub.Close)
	return f
}

func (f *fakeHub) log(kind string, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, kind+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
}

func (f *fakeHub) reqs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// tinyTiktoken is a vocabulary of the 256 bytes (ranks 0-255 in byte order) and a few merges.
func tinyTiktoken() string {
	var b strings.Builder
	for c := range 256 {
		fmt.Fprintf(&b, "%s %d\n", b64(string([]byte{byte(c)})), c)
	}
	for i, m := range []string{"he", "ll", "hell", "hello", "wo", "wor", "world"} {
		fmt.Fprintf(&b, "%s %d\n", b64(m), 256+i)
	}
	return b.String()
}

func (f *fakeHub) opts(t *testing.T) Options {
	return Options{Endpoint: f.hub.URL, CacheDir: t.TempDir()}
}

func TestHubDownloadAndCache(t *testing.T) {
	f := newFakeHub(t)
	opts := f.opts(t)
	tok, err := LoadWith("acme/tiny", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.Encode("hello world<|eot|>", false), []int{259, ' ', 262, 300}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	repoDir := filepath.Join(opts.CacheDir, "models--acme--tiny")
	if b, err := os.ReadFile(filepath.Join(repoDir, "refs", "main")); err != nil || string(b) != fakeCommit {
		t.Errorf("refs/main = %q, %v; want %s", b, err, fakeCommit)
	}
	link := filepath.Join(repoDir, "snapshots", fakeCommit, "tiktoken.model")
	if target, err := os.Readlink(link); err != nil || !strings.HasPrefix(target, filepath.Join("..", "..", "blobs")+string(filepath.Separator)) {
		t.Errorf("snapshot file %s -> %q, %v; want a link into blobs/", link, target, err)
	}
	// The blob is named by the Hub's X-Linked-Etag, not the CDN's ETag.
	if _, err := os.Stat(filepath.Join(repoDir, "blobs", fmt.Sprintf("%x", len(tinyTiktoken())*7919+len("tiktoken.model")))); err != nil {
		t.Errorf("blob named by X-Linked-Etag: %v", err)
	}
	if _, err := os.Stat(filepath.Join(repoDir, "snapshots", fakeCommit, "tokenizer_config.json")); err != nil {
		t.Errorf("tokenizer_config.json not cached: %v", err)
	}
	n := len(f.reqs())
	// Second load: from the cache, no requests, and it works offline.
	opts.Offline = true
	tok2, err := LoadWith("acme/tiny", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.reqs()); got != n {
		t.Errorf("cached load made %d requests, want 0", got-n)
	}
	if tok2.Fingerprint() != tok.Fingerprint() || tok.Fingerprint() == "" {
		t.Errorf("fingerprints %q and %q, want equal and non-empty", tok.Fingerprint(), tok2.Fingerprint())
	}
}

func TestHubRevision(t *testing.T) {
	f := newFakeHub(t)
	opts := f.opts(t)
	if _, err := LoadWith("acme/tiny@v2", opts); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(opts.CacheDir, "models--acme--tiny", "refs", "v2")); string(b) != fakeCommit2 {
		t.Errorf("refs/v2 = %q, want %s", b, fakeCommit2)
	}
	// A commit hash needs no ref; Options.Revision overrides the name's.
	opts.Revision = fakeCommit
	opts.Offline = false
	if _, err := LoadWith("acme/tiny@v2", opts); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.reqs() {
		if strings.Contains(r, "/resolve/main/") {
			t.Errorf("request %q, want none for main", r)
		}
	}
	opts.Offline = true
	if _, err := LoadWith("acme/tiny@"+fakeCommit, Options{CacheDir: opts.CacheDir, Offline: true}); err != nil {
		t.Errorf("offline load by commit: %v", err)
	}
}

func TestHubGated(t *testing.T) {
	f := newFakeHub(t)
	opts := f.opts(t)
	_, err := LoadWith("acme/gated", opts)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "HF_TOKEN") || !strings.Contains(err.Error(), "restricted") {
		t.Fatalf("LoadWith(gated) error = %v, want a 401 that mentions HF_TOKEN", err)
	}
	opts.Token = fakeToken
	if _, err := LoadWith("acme/gated", opts); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.reqs() {
		if strings.HasPrefix(r, "cdn ") && strings.Contains(r, fakeToken) {
			t.Errorf("token sent to the CDN: %q", r)
		}
	}
	if !slices.Contains(f.reqs(), "hub /acme/gated/resolve/main/tiktoken.model Bearer "+fakeToken) {
		t.Errorf("requests %q, want the token sent to the Hub", f.reqs())
	}
}

func TestHubTokenNeverInErrors(t *testing.T) {
	f := newFakeHub(t)
	opts := f.opts(t)
	opts.Token = fakeToken
	_, err := LoadWith("acme/broken", opts)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("error = %v, want a 500", err)
	}
	if strings.Contains(err.Error(), fakeToken) {
		t.Errorf("error %q contains the token", err)
	}
}

func TestHubRedirectedRepo(t *testing.T) {
	f := newFakeHub(t)
	tok, err := LoadWith("acme/old-name", f.opts(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Count("hello", false); got != 1 {
		t.Errorf("Count(hello) = %d, want 1", got)
	}
}

func TestHubNotFoundListsEverything(t *testing.T) {
	f := newFakeHub(t)
	opts := f.opts(t)
	_, err := LoadWith("acme/missing", opts)
	if err == nil {
		t.Fatal("LoadWith(acme/missing) succeeded")
	}
	for _, want := range []string{"built-in", "gpt2", "file or directory acme/missing", "Hugging Face cache", "models--acme--missing", "no refs/main", "tokenizer.json: 404", "tiktoken.model: 404"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not mention %q", err, want)
		}
	}
	opts.Offline = true
	_, err = LoadWith("acme/missing", opts)
	if err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Errorf("offline error = %v, want it to say the Hub was not contacted", err)
	}
	for _, r := range f.reqs() {
		if strings.Contains(r, "missing") && strings.Count(strings.Join(f.reqs(), "\n"), "missing") > 2 {
			t.Errorf("offline load made requests: %q", f.reqs())
			break
		}
	}
	_, err = Load("not a/valid name!")
	if err == nil || !strings.Contains(err.Error(), "not a model id") {
		t.Errorf("Load(bad) error = %v, want it to say it is not a model id", err)
	}
}

func TestHubEnv(t *testing.T) {
	f := newFakeHub(t)
	home := t.TempDir()
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_ENDPOINT", f.hub.URL)
	t.Setenv("HF_TOKEN", fakeToken)
	t.Setenv("HF_HUB_OFFLINE", "")
	if _, err := Load("acme/gated"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "hub", "models--acme--gated", "refs", "main")); err != nil {
		t.Errorf("HF_HOME cache not used: %v", err)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	if _, err := Load("acme/gated"); err == nil || !strings.Contains(err.Error(), "offline") {
		t.Errorf("HF_HUB_OFFLINE=1 with an empty HF_HUB_CACHE: error = %v, want offline", err)
	}
}
