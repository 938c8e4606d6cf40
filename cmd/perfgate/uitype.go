package main

import (
	"flag"
	"slices"
	"strings"
)

// uiTypeUsage is --ui-type's help, the same on every command that runs load (profile,
// with its repeats, sweeps, searches and gates; demo).
const uiTypeUsage = "[output] the progress display: dashboard (live, full screen), simple (a progress line) or none; default dashboard on a terminal, simple otherwise"

// registerUITypeFlag adds --ui-type and its alias --ui (AIPerf's) to fs.
func registerUITypeFlag(fs *flag.FlagSet, p *string) {
	for _, n := range []string{"ui-type", "ui"} {
		fs.StringVar(p, n, "", uiTypeUsage)
	}
}

// checkUIType refuses a --ui-type that is none of uiTypes (before any request: exit 2).
func checkUIType(v string) error {
	if v != "" && !slices.Contains(uiTypes, v) {
		return invalidf("--ui-type %q: want one of %s", v, strings.Join(uiTypes, ", "))
	}
	return nil
}
