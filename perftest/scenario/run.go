package scenario

import (
	"context"
	"errors"
)

// Run runs sc: it starts the in-process mock server when sc.Endpoint is empty, drives
// the load generator until the request count or duration is reached or ctx is done,
// and writes the artifacts into artifactDir ("" = write none).
func Run(ctx context.Context, sc Scenario, artifactDir string) (*Outcome, error) {
	return nil, errors.New("scenario: run: not implemented yet")
}
