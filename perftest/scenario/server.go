package scenario

import (
	"errors"
	"fmt"
	"strings"
)

// validateServer checks Scenario.Server: a command, and a URL to serve (its own or
// the scenario's first).
func (s Scenario) validateServer() error {
	if s.Server == nil {
		return nil
	}
	srv := *s.Server
	if srv.URL == "" {
		if len(s.URLs) == 0 {
			return fmt.Errorf("server %s: no URL: set urls (--url) to where the server listens, e.g. http://127.0.0.1:8000", srv.NameOrDefault())
		}
		srv.URL = s.URLs[0]
	}
	if err := srv.Validate(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "serverproc: "))
	}
	return nil
}
