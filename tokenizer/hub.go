package tokenizer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// DefaultHubEndpoint is the Hugging Face Hub used when neither Options.Endpoint nor
// $HF_ENDPOINT is set.
const DefaultHubEndpoint = "https://huggingface.co"

// hubVocabFiles are the files a Hub tokenizer is built from, in order of preference; one
// must exist. hubExtraFiles are fetched too when present (a 404 is fine).
var (
	hubVocabFiles = []string{"tokenizer.json", "tiktoken.model"}
	hubExtraFiles = []string{"tokenizer_config.json", "special_tokens_map.json", "generation_config.json", "chat_template.jinja"}
)

// hub is the resolved Hub configuration of one Load call.
type hub struct {
	endpoint string
	token    string
	cache    string
	offline  bool
	client   *http.Client
}

func newHub(opts Options) *hub {
	h := &hub{
		endpoint: strings.TrimRight(cmpOr(opts.Endpoint, os.Getenv("HF_ENDPOINT"), DefaultHubEndpoint), "/"),
		token:    cmpOr(opts.Token, os.Getenv("HF_TOKEN")),
		cache:    opts.CacheDir,
		offline:  opts.Offline || envTrue("HF_HUB_OFFLINE"),
	}
	if h.cache == "" {
		h.cache = hubCacheDir()
	}
	base := opts.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 60 * time.Second}
	}
	c := *base
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h.client = &c
	return h
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func envTrue(k string) bool {
	switch strings.ToLower(os.Getenv(k)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// hubCacheDir is huggingface_hub's cache location.
func hubCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "huggingface", "hub")
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// loadHub loads repo at rev from the cache, else downloads it. It returns a nil
// Tokenizer and the places tried when the model was not found; err is for a model that
// was found but could not be loaded.
func loadHub(name, repo, rev string, opts Options) (tok *Tokenizer, tried []string, err error) {
	if rev == "" {
		rev = "main"
	}
	h := newHub(opts)
	repoDir := filepath.Join(h.cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	snap, why := h.cached(repoDir, rev)
	if snap != "" {
		tok, err := loadDir(name, snap, opts)
		return tok, nil, err
	}
	tried = append(tried, fmt.Sprintf("Hugging Face cache %s: %s", repoDir, why))
	if h.offline {
		return nil, append(tried, "Hugging Face Hub: not contacted (offline: HF_HUB_OFFLINE is set)"), nil
	}
	snap, why = h.download(repoDir, repo, rev)
	if snap == "" {
		return nil, append(tried, why), nil
	}
	tok, err = loadDir(name, snap, opts)
	return tok, nil, err
}

// cached returns the snapshot directory of rev if it holds a tokenizer, else why not.
func (h *hub) cached(repoDir, rev string) (snap, why string) {
	commit := rev
	if !commitHash.MatchString(rev) {
		b, err := os.ReadFile(filepath.Join(repoDir, "refs", rev))
		if err != nil {
			return "", fmt.Sprintf("no refs/%s", rev)
		}
		commit = strings.TrimSpace(string(b))
	}
	snap = filepath.Join(repoDir, "snapshots", commit)
	for _, f := range hubVocabFiles {
		if isFile(filepath.Join(snap, f)) {
			return snap, ""
		}
	}
	return "", fmt.Sprintf("snapshots/%s has none of %s", commit, strings.Join(hubVocabFiles, ", "))
}

// download fetches the tokenizer files of repo at rev into the cache and returns the
// snapshot directory, or "" and what went wrong.
func (h *hub) download(repoDir, repo, rev string) (snap, why string) {
	var commit string
	var errs []string
	got := false
	for _, f := range hubVocabFiles {
		c, status, err := h.fetch(repoDir, repo, rev, f)
		if err != nil {
			errs = append(errs, err.Error())
			if status != http.StatusNotFound {
				break // gated, server error…: the other file would fail the same way
			}
			continue
		}
		commit, got = c, true
		break
	}
	if !got {
		return "", strings.Join(errs, "; ")
	}
	for _, f := range hubExtraFiles {
		if _, status, err := h.fetch(repoDir, repo, commit, f); err != nil && status != http.StatusNotFound {
			return "", err.Error()
		}
	}
	if rev != commit {
		if err := writeFileAtomic(filepath.Join(repoDir, "refs", rev), []byte(commit)); err != nil {
			return "", fmt.Sprintf("Hugging Face cache: %v", err)
		}
	}
	return filepath.Join(repoDir, "snapshots", commit), ""
}

// fetch downloads one file into the cache layout: blobs/<etag> holds the bytes and
// snapshots/<commit>/<file> links to it. It returns the commit the Hub resolved rev to
// (X-Repo-Commit), and on failure the HTTP status (0 if there was none).
func (h *hub) fetch(repoDir, repo, rev, file string) (commit string, status int, err error) {
	u := h.endpoint + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + file
	resp, commit, etag, err := h.get(u)
	if err != nil {
		return "", 0, fmt.Errorf("hub: %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg := resp.Status
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			msg += " (the model is gated or private, or does not exist: set HF_TOKEN to a token with access)"
		case http.StatusForbidden:
			msg += " (the token has no access to this model: accept its license on the Hub)"
		}
		if m := resp.Header.Get("X-Error-Message"); m != "" {
			msg += ": " + m
		}
		return "", resp.StatusCode, fmt.Errorf("hub: %s: %s", u, msg)
	}
	if commit == "" {
		if !commitHash.MatchString(rev) {
			return "", resp.StatusCode, fmt.Errorf("hub: %s: no X-Repo-Commit header", u)
		}
		commit = rev
	}
	if !commitHash.MatchString(commit) && !safeName(commit) {
		return "", resp.StatusCode, fmt.Errorf("hub: %s: bad X-Repo-Commit %q", u, commit)
	}
	blobs := filepath.Join(repoDir, "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return "", 0, fmt.Errorf("hub cache: %w", err)
	}
	tmp, err := os.CreateTemp(blobs, ".download-*")
	if err != nil {
		return "", 0, fmt.Errorf("hub cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, sum), resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", resp.StatusCode, fmt.Errorf("hub: %s: %v", u, err)
	}
	if etag == "" || !safeName(etag) {
		etag = hex.EncodeToString(sum.Sum(nil))
	}
	blob := filepath.Join(blobs, etag)
	if err := os.Rename(tmp.Name(), blob); err != nil {
		return "", 0, fmt.Errorf("hub cache: %w", err)
	}
	link := filepath.Join(repoDir, "snapshots", commit, file)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", 0, fmt.Errorf("hub cache: %w", err)
	}
	os.Remove(link)
	if err := os.Symlink(filepath.Join("..", "..", "blobs", etag), link); err != nil {
		// No symlinks (some Windows set-ups): huggingface_hub copies then, so do we.
		b, rerr := os.ReadFile(blob)
		if rerr != nil {
			return "", 0, fmt.Errorf("hub cache: %w", rerr)
		}
		if err := writeFileAtomic(link, b); err != nil {
			return "", 0, fmt.Errorf("hub cache: %w", err)
		}
	}
	return commit, resp.StatusCode, nil
}

// get GETs u, following up to 10 redirects itself so that it can read the Hub's
// X-Repo-Commit and ETag from the first response (the Hub redirects large files to a CDN
// whose answer lacks them) and send the token only to the Hub's own host.
func (h *hub) get(u string) (resp *http.Response, commit, etag string, err error) {
	hubURL, err := url.Parse(h.endpoint)
	if err != nil {
		return nil, "", "", fmt.Errorf("bad endpoint: %v", err)
	}
	for range 10 {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		if err != nil {
			return nil, "", "", err
		}
		req.Header.Set("User-Agent", "perfgate-tokenizer")
		if h.token != "" && req.URL.Host == hubURL.Host {
			req.Header.Set("Authorization", "Bearer "+h.token)
		}
		resp, err = h.client.Do(req)
		if err != nil {
			return nil, "", "", errors.Unwrap(err) // drop the URL: the caller names it
		}
		if commit == "" {
			commit = resp.Header.Get("X-Repo-Commit")
		}
		if etag == "" {
			etag = normalizeETag(cmpOr(resp.Header.Get("X-Linked-Etag"), resp.Header.Get("ETag")))
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return resp, commit, etag, nil
		}
		resp.Body.Close()
		next, err := req.URL.Parse(loc)
		if err != nil {
			return nil, "", "", fmt.Errorf("bad redirect %q: %v", loc, err)
		}
		u = next.String()
	}
	return nil, "", "", errors.New("too many redirects")
}

func normalizeETag(e string) string {
	e = strings.TrimPrefix(e, "W/")
	return strings.Trim(e, `"`)
}

// safeName reports whether s can be a file name in the cache.
func safeName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 200 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
