package docstest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var (
	// inlineLink is [text](target) or [text](target "title"); refLink a reference
	// definition, [name]: target.
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`([^`\n]+)`")
	heading    = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// fileLike is the last element of a path that names a file: NAME.EXT, the extension
	// in lower case (pkg.Name is a Go identifier, not a file).
	fileLike = regexp.MustCompile(`\.[a-z][a-z0-9]{0,6}$`)
)

// prose returns a Markdown page without its fenced code blocks (```, ~~~), whose
// paths are commands' arguments rather than references, keeping its line count.
func prose(doc string) string {
	lines := strings.Split(doc, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// slug is the anchor GitHub gives a heading: lower case, spaces to hyphens, other
// punctuation dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors lists the anchors a Markdown page defines: its headings' slugs (a repeated
// one numbered -1, -2, … as GitHub does) and explicit <a id=…> or <a name=…>.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(prose(doc), -1) {
		s := slug(m[1])
		a := s
		for n := 1; out[a]; n++ {
			a = fmt.Sprintf("%s-%d", s, n)
		}
		out[a] = true
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(doc, -1) {
		out[m[1]] = true
	}
	return out
}

// expand returns the paths a brace pattern stands for: a/{b,c}.go is a/b.go and
// a/c.go.
func expand(p string) []string {
	i := strings.Index(p, "{")
	j := strings.Index(p, "}")
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expand(p[:i]+alt+p[j+1:])...)
	}
	return out
}

// repoPath reports whether a code span is a path in the repository that names a file
// or a directory: no spaces, a first element that is a top-level entry of the tree,
// and a last element with an extension, or a trailing slash. Shell variables, URLs,
// Go package patterns (./...), FILE:LINE forms and paths under a directory git ignores
// (outputs such as bench/out/) are not.
func repoPath(span string, top map[string]bool, ignored []string) (string, bool) {
	p := strings.TrimPrefix(span, "./")
	if strings.ContainsAny(p, " \t$<>=:@;()'\"[]\\|") || strings.Contains(p, "...") || !strings.Contains(p, "/") {
		return "", false
	}
	for _, d := range ignored {
		if strings.HasPrefix(p, d) {
			return "", false
		}
	}
	first, _, _ := strings.Cut(p, "/")
	if !top[first] {
		return "", false
	}
	last := p[strings.LastIndex(strings.TrimSuffix(p, "/"), "/")+1:]
	if !strings.HasSuffix(p, "/") && !fileLike.MatchString(strings.TrimSuffix(last, "}")) {
		return "", false
	}
	return p, true
}

// brokenRefs lists what a Markdown file (path relative to dir) names that the tree
// under dir does not hold: relative links to files (and their #anchors, in Markdown
// pages) and repository paths in code spans, each as FILE:LINE: what.
func brokenRefs(dir, file string, top map[string]bool, ignored []string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	doc := prose(string(raw))
	line := func(off int) int { return strings.Count(doc[:off], "\n") + 1 }
	var out []string
	bad := func(off int, format string, a ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s", file, line(off), fmt.Sprintf(format, a...)))
	}
	var links [][]int
	links = append(links, inlineLink.FindAllStringSubmatchIndex(doc, -1)...)
	links = append(links, refLink.FindAllStringSubmatchIndex(doc, -1)...)
	for _, m := range links {
		target := doc[m[2]:m[3]]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		full := filepath.Join(dir, file)
		if path != "" {
			full = filepath.Join(dir, filepath.Dir(file), filepath.FromSlash(path))
			if _, err := os.Stat(full); err != nil {
				bad(m[0], "link to %s: no such file", target)
				continue
			}
		}
		if anchor == "" || !strings.HasSuffix(full, ".md") {
			continue
		}
		page, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		if !anchors(string(page))[anchor] {
			bad(m[0], "link to %s: %s has no heading with the anchor #%s", target, filepath.Base(full), anchor)
		}
	}
	for _, m := range codeSpan.FindAllStringSubmatchIndex(doc, -1) {
		p, ok := repoPath(doc[m[2]:m[3]], top, ignored)
		if !ok {
			continue
		}
		for _, e := range expand(p) {
			found := false
			if strings.Contains(e, "*") {
				ms, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(e)))
				found = len(ms) > 0
			} else {
				fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e)))
				found = err == nil && (!strings.HasSuffix(e, "/") || fi.IsDir())
			}
			if !found {
				bad(m[0], "`%s` names %s, which is not in the tree", p, e)
			}
		}
	}
	return out, nil
}

// pages lists README.md, CHANGELOG.md (if there is one) and docs/*.md under dir, the repository's top-level entries
// (what a path in a code span must start with to be one) and the directories its
// .gitignore names from the top (/bench/out/ → bench/out/: outputs, not the tree's).
func pages(dir string) (files []string, top map[string]bool, ignored []string, err error) {
	if gi, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
		for _, l := range strings.Split(string(gi), "\n") {
			if d, ok := strings.CutPrefix(strings.TrimSpace(l), "/"); ok && strings.HasSuffix(d, "/") && !strings.ContainsAny(d, "*?[!") {
				ignored = append(ignored, d)
			}
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	top = map[string]bool{}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	docs, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		return nil, nil, nil, err
	}
	files = []string{"README.md"}
	if top["CHANGELOG.md"] {
		files = append(files, "CHANGELOG.md")
	}
	n := len(files)
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	slices.Sort(files[n:])
	return files, top, ignored, nil
}

// TestDocReferences: every relative link in README.md, CHANGELOG.md and docs/*.md
// leads to a file that exists (and a link to a heading, to a heading that exists), and every
// repository path the pages name in a code span (a directory ending in /, or a file
// with an extension, under one of the repository's top-level directories) is in the
// tree. Moving or deleting a file a page names fails here.
func TestDocReferences(t *testing.T) {
	files, top, ignored, err := pages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		msgs, err := brokenRefs(root, f, top, ignored)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			t.Error(m)
		}
	}
}
