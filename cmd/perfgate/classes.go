package main

import (
	"io"
	"maps"
	"slices"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// printClassTables prints, under a run's console table, one table per traffic class
// of a run of several (a scenario file's classes; docs/classes.md): each class's
// requests alone, titled "perfgate | class NAME". Nothing for a run of one class.
func printClassTables(w io.Writer, m record.Metrics, width int) {
	for _, name := range slices.Sorted(maps.Keys(m.Classes)) {
		_ = reportgen.WriteTable(w, m.Classes[name], reportgen.TableOptions{Width: width, Title: "perfgate | class " + name})
	}
}
