// Command perfgate is the command-line face of the perfgate library.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	_ = ctx
	fmt.Fprintln(stderr, "perfgate: under construction")
	return 2
}
