package imageref

import (
	"regexp"
	"testing"
)

// tagSyntax is the OCI distribution spec's tag grammar.
var tagSyntax = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

func TestTag(t *testing.T) {
	for _, c := range []struct{ version, want string }{
		{"v1.2.3", "v1.2.3"},
		{" v1.2.3\n", "v1.2.3"},
		{"v1.3.0-rc.1", "v1.3.0-rc.1"},
		{"v0.0.0-20260101000000-abcdef123456", "v0.0.0-20260101000000-abcdef123456"},
		{"v2.0.0+incompatible", "v2.0.0_incompatible"},
		{"devel 0123456789ab", "sha-0123456789ab"},
		{"devel 0123456789ab+dirty", "latest"},
		{"devel", "latest"},
		{"(devel)", "latest"},
		{"", "latest"},
		{"v1.2", "latest"},
		{"devel 0123456789AB", "latest"},
	} {
		got := Tag(c.version)
		if got != c.want {
			t.Errorf("Tag(%q) = %q, want %q", c.version, got, c.want)
		}
		if !tagSyntax.MatchString(got) {
			t.Errorf("Tag(%q) = %q is not a valid OCI tag", c.version, got)
		}
	}
}

func TestRef(t *testing.T) {
	if got, want := Ref("v1.2.3"), "ghcr.io/perfgate/perfgate:v1.2.3"; got != want {
		t.Errorf("Ref = %q, want %q", got, want)
	}
	if got, want := Ref("devel"), "ghcr.io/perfgate/perfgate:latest"; got != want {
		t.Errorf("Ref = %q, want %q", got, want)
	}
}
