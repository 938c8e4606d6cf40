package reportgen

import (
	"runtime/debug"
	"testing"
)

func TestVersionFromVCS(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/perfgate/perfgate", Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T15:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	if v := versionOf(bi); v != "devel 0123456789ab+dirty" {
		t.Errorf("versionOf = %q", v)
	}
	v := vcsOf(bi)
	if v == nil || v.Revision != rev || !v.Modified || v.Time.IsZero() {
		t.Errorf("vcsOf = %+v", v)
	}
	bi.Settings[2].Value = "false"
	if v := versionOf(bi); v != "devel 0123456789ab" {
		t.Errorf("clean tree: versionOf = %q", v)
	}
	if v := vcsOf(&debug.BuildInfo{}); v != nil {
		t.Errorf("no VCS stamp: %+v, want nil", v)
	}
	bi.Main.Version = "v0.3.0"
	if v := versionOf(bi); v != "v0.3.0" {
		t.Errorf("a tagged module: %q", v)
	}
}
