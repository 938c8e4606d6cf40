package sweep_test

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/reportgen/sweep"
)

// ExampleSearch finds the highest concurrency at which a (here simulated) server still
// meets its objectives. In the CLI the probe runs one scenario at that load.
func ExampleSearch() {
	probe := func(_ context.Context, load float64) (sweep.Point, error) {
		return sweep.Point{Pass: load <= 23}, nil // the knee of this fake server
	}
	res, _ := sweep.Search(context.Background(), sweep.SearchOptions{Lo: 1, Hi: 64, Integer: true, Tolerance: 0.01}, probe)
	fmt.Printf("highest passing: %g, lowest failing: %g, after %d runs\n", res.Best, res.FailedAt, len(res.Probes))
	// Output:
	// highest passing: 23, lowest failing: 24, after 8 runs
}

func ExampleLevels() {
	l, _ := sweep.Levels("1:64:x2")
	fmt.Println(l)
	// Output:
	// [1 2 4 8 16 32 64]
}
