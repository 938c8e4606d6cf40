package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/perfgate/perfgate/reportgen"
)

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "perfgate %s (%s, %s/%s)\n", reportgen.ModuleVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if v := reportgen.BuildVCS(); v != nil {
		tree := "clean tree"
		if v.Modified {
			tree = "modified tree"
		}
		fmt.Fprintf(e.stdout, "revision %s (%s, committed %s)\n", v.Revision, tree, v.Time.UTC().Format(time.RFC3339))
	}
	return nil
}
