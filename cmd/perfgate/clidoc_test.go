package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateCLIDoc = flag.Bool("update-cli-doc", false, "rewrite docs/cli-reference.md from the commands' help")

const cliDocPath = "../../docs/cli-reference.md"

// cliReference renders every command's full help (profile's --help-all, the others' -h)
// as docs/cli-reference.md: the flag sets themselves are the source, so the page cannot
// drift from them.
func cliReference(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# perfgate CLI reference\n\n")
	b.WriteString("<!-- Generated from the flag sets by cmd/perfgate's TestCLIReferenceCurrent; DO NOT EDIT.\n")
	b.WriteString("     Regenerate: go test ./cmd/perfgate -run TestCLIReferenceCurrent -update-cli-doc -->\n\n")
	b.WriteString("The guide is [cli.md](cli.md); this page is each command's `-h` (for `profile`, `--help-all`).\n\n")
	var top bytes.Buffer
	if code := run(context.Background(), []string{"help"}, &top, &top); code != ExitOK {
		t.Fatalf("perfgate help: exit %d: %s", code, top.String())
	}
	fmt.Fprintf(&b, "```text\n%s```\n", top.String())
	for _, c := range commands() {
		arg := "-h"
		if c.name == "profile" {
			arg = "--help-all"
		}
		var out, errs bytes.Buffer
		if code := run(context.Background(), []string{c.name, arg}, &out, &errs); code != ExitOK {
			t.Fatalf("perfgate %s %s: exit %d: %s", c.name, arg, code, errs.String())
		}
		text := out.String() + errs.String()
		fmt.Fprintf(&b, "\n## perfgate %s\n\n%s.\n\n```text\n%s", c.name, c.summary, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("```\n")
	}
	return b.Bytes()
}

// TestCLIReferenceCurrent fails when docs/cli-reference.md is not what the flag sets
// print now. Regenerate with go test ./cmd/perfgate -run TestCLIReferenceCurrent -update-cli-doc.
func TestCLIReferenceCurrent(t *testing.T) {
	want := cliReference(t)
	if *updateCLIDoc {
		if err := os.WriteFile(cliDocPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatalf("%v (generate it: go test ./cmd/perfgate -run TestCLIReferenceCurrent -update-cli-doc)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/cli-reference.md is stale: a command's flags or help changed; regenerate it with go test ./cmd/perfgate -run TestCLIReferenceCurrent -update-cli-doc")
	}
}

// TestCLIReferenceNamesEveryFlag: the generated page lists every flag of every command,
// so a flag that -h hid would show up as a failure here rather than as a gap in the docs.
func TestCLIReferenceNamesEveryFlag(t *testing.T) {
	doc := string(cliReference(t))
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	registerProfileFlags(fs, &profileFlags{}, &profileOpts{})
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(doc, "--"+f.Name) && !strings.Contains(doc, "-"+f.Name+",") {
			t.Errorf("profile flag --%s is not in the generated reference", f.Name)
		}
	})
}
