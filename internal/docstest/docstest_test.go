package docstest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree writes files (slash-separated path → content) under a temporary directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A module's packages become rows from their doc comments' first sentences; another
// module, testdata and files that do not build are left out; README.md's table holds
// what a user imports or runs; a stale table is reported with its diff and rewritten
// under -update, leaving the rest of the file as it was.
func TestLayoutFromTree(t *testing.T) {
	dir := tree(t, map[string]string{
		"go.mod":           "module example.com/m\n",
		"a/a.go":           "package a\n",
		"a/doc.go":         "// Package a draws the workloads. It does more.\npackage a\n",
		"a/sub/s.go":       "// Package sub is a helper of a | b.\npackage sub\n",
		"a/testdata/t.go":  "package nodoc\n",
		"cmd/tool/main.go": "// Command tool runs a. Detail.\npackage main\n",
		"internal/x/x.go":  "// Package x is shared.\npackage x\n",
		"e/e_test.go":      "// Package e tests a from outside.\npackage e_test\n",
		"nested/go.mod":    "module example.com/n\n",
		"nested/n.go":      "package nodoc\n",
		"g/gen.go":         "//go:build ignore\n\npackage main\n",
	})
	pkgs, err := packages(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pkgs {
		got = append(got, p.dir+": "+p.row())
	}
	want := []string{"a: draws the workloads", `a/sub: a helper of a \| b`, "cmd/tool: runs a", "e: tests a from outside", "internal/x: shared"}
	if !slices.Equal(got, want) {
		t.Fatalf("packages = %q; want %q", got, want)
	}
	parts := layoutParts(pkgs)
	const readme = "| package | what it does |\n|---|---|\n| `a/` | draws the workloads |\n| `a/sub/` | a helper of a \\| b |\n| `cmd/tool/` | runs a |\n"
	if parts[0].text != readme {
		t.Errorf("README table:\n%s\nwant:\n%s", parts[0].text, readme)
	}
	if !strings.Contains(parts[1].text, "| `e/` |") || !strings.Contains(parts[1].text, "| `internal/x/` |") {
		t.Errorf("development table lacks the test-only or internal package:\n%s", parts[1].text)
	}

	old := "# m\n\n" + parts[0].begin + "\n| package | what it does |\n|---|---|\n| `a/` | draws the workloads |\n" + layoutEnd + "\n\nafter\n"
	dev := "x\n" + parts[1].begin + "\n" + parts[1].text + layoutEnd + "\n"
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for f, s := range map[string]string{"README.md": old, "docs/development.md": dev} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := stale(dir, parts, layoutEnd, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "README.md is stale") || !strings.Contains(msgs[0], "+| `cmd/tool/` | runs a |") {
		t.Fatalf("stale = %q; want README.md reported with the missing rows", msgs)
	}
	if _, err := stale(dir, parts, layoutEnd, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if want := "# m\n\n" + parts[0].begin + "\n" + readme + layoutEnd + "\n\nafter\n"; string(b) != want {
		t.Errorf("rewritten README.md:\n%s\nwant:\n%s", b, want)
	}
	if msgs, err := stale(dir, parts, layoutEnd, false); err != nil || len(msgs) != 0 {
		t.Errorf("after the rewrite: %q, %v", msgs, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stale(dir, parts, layoutEnd, false); err == nil || !strings.Contains(err.Error(), "README.md: no line") {
		t.Errorf("README.md without markers: %v; want an error naming the missing marker", err)
	}
}

// A package without a doc comment, with one that names another package or no
// package, or whose first sentence is too long for a row is refused, by directory.
func TestLayoutRefusesDocComments(t *testing.T) {
	dir := tree(t, map[string]string{
		"go.mod":    "module example.com/m\n",
		"b/b.go":    "package b\n",
		"c/c.go":    "// Package cc does C.\npackage c\n",
		"d/d.go":    "// Package d " + strings.Repeat("does ", 40) + "everything.\npackage d\n",
		"m/main.go": "// Tool does things.\npackage main\n",
		"ok/ok.go":  "// Package ok is fine.\npackage ok\n",
	})
	_, err := packages(dir)
	if err == nil {
		t.Fatal("packages accepted bad doc comments")
	}
	for _, want := range []string{
		"b/: no doc comment",
		`c/: the doc comment starts "Package cc does C."; it should start "Package c "`,
		"d/: the doc comment's first sentence is 211 characters",
		`m/: the doc comment starts "Tool does things."; it should start "Command NAME "`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "ok/") {
		t.Errorf("error names a good package:\n%v", err)
	}
}

// Broken links, anchors and repository paths are reported with their line; URLs,
// paths outside the repository's top-level directories or under a directory git
// ignores, package patterns, Go identifiers and code in fenced blocks are not checked.
func TestBrokenRefs(t *testing.T) {
	dir := tree(t, map[string]string{
		"pkg/file.go": "package pkg\n",
		".gitignore":  "/pkg/out/\n*.test\n",
		"docs/a.md":   "# A\n\n## The heading, `with code`\n\n## The heading, `with code`\n\n<a id=\"explicit\"></a>\n\n[back](../README.md)\n",
		"README.md": strings.Join([]string{
			"[ok](docs/a.md) and [bad](docs/missing.md)",
			"[anchor](docs/a.md#the-heading-with-code) [second](docs/a.md#the-heading-with-code-1) [explicit](docs/a.md#explicit)",
			"[anchor bad](docs/a.md#nope) [web](https://example.com/x.md) [self](#a-readme)",
			"`pkg/file.go`, `pkg/gone.go`, `pkg/`, `pkg/file.go/`, `pkg/{file,other}.go`, `pkg/*.go`, `pkg/*.txt`",
			"`other/x.json`, `$CACHE/pkg/x.json`, `./pkg/...`, `pkg/file.go:12`, `pkg/noext`, `go test ./pkg`, `pkg/out/x.txt`, `pkg/file.Name`",
			"```sh",
			"`pkg/fenced.go` [fenced](nowhere.md)",
			"```",
			"# A README",
			"[ref]: docs/gone.md",
		}, "\n") + "\n",
	})
	files, top, ignored, err := pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"README.md", "docs/a.md"}) {
		t.Fatalf("pages = %q", files)
	}
	var got []string
	for _, f := range files {
		msgs, err := brokenRefs(dir, f, top, ignored)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msgs...)
	}
	want := []string{
		"README.md:1: link to docs/missing.md: no such file",
		"README.md:3: link to docs/a.md#nope: a.md has no heading with the anchor #nope",
		"README.md:10: link to docs/gone.md: no such file",
		"README.md:4: `pkg/gone.go` names pkg/gone.go, which is not in the tree",
		"README.md:4: `pkg/file.go/` names pkg/file.go/, which is not in the tree",
		"README.md:4: `pkg/{file,other}.go` names pkg/other.go, which is not in the tree",
		"README.md:4: `pkg/*.txt` names pkg/*.txt, which is not in the tree",
	}
	if !slices.Equal(got, want) {
		t.Errorf("broken references:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Sessions, drift and dependence": "sessions-drift-and-dependence",
		"`perfgate mock` flags":          "perfgate-mock-flags",
		"K-run gate (v0.2)":              "k-run-gate-v02",
		"Deprecated — shims":             "deprecated--shims",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q; want %q", h, got, want)
		}
	}
}
