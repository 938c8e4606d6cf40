package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/reportgen"
)

// --slice-duration writes AIPerf's timeslice exports beside the others (with the
// export prefix), and a slice duration out of range is invalid configuration, the
// flag named, before any request (exports.slice_duration in a file: the scenario's check).
func TestProfileSliceDuration(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--request-count", "12", "--concurrency", "2", "--osl", "4",
		"--artifact-dir", art, "--slice-duration", "0.05", "--profile-export-prefix", "nightly")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, name := reportgen.TimesliceFiles("nightly")
	f, err := os.Open(filepath.Join(art, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != "Timeslice,Metric,Unit,Stat,Value" {
		t.Fatalf("%s: %d rows, %v", name, len(rows), err)
	}
	slices := map[string]bool{}
	for _, r := range rows[1:] {
		slices[r[0]] = true
	}
	if len(slices) < 2 {
		t.Errorf("%s holds %d slices; 12 requests at concurrency 2 span several 50 ms slices", name, len(slices))
	}
	if html, _ := os.ReadFile(filepath.Join(art, reportgen.RunReportFile)); !strings.Contains(string(html), "time slices of 0.05s") {
		t.Errorf("report.html does not draw its charts on the 0.05 s slices")
	}
	for _, bad := range []string{"-1", "0.0001"} {
		code, _, errOut = cli(t, "profile", "--mock", "-q", "--request-count", "4", "--artifact-dir", filepath.Join(t.TempDir(), "x"), "--slice-duration", bad)
		if code != ExitInvalidConfig || !strings.Contains(errOut, "--slice-duration "+bad) {
			t.Errorf("--slice-duration %s: exit %d, %q; want 2 naming the flag", bad, code, errOut)
		}
	}
}
