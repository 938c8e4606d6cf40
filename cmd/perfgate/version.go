package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/perfgate/perfgate/reportgen"
)

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "perfgate %s (%s, %s/%s)\n", reportgen.ModuleVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
