package scenario

import (
	"errors"
	"strings"
	"testing"
)

// exports.slice_duration is seconds in [0.001, 1e6] (0 = no timeslice export); a value
// outside is invalid, named by its key.
func TestExportsSliceDurationValidate(t *testing.T) {
	for _, c := range []struct {
		d  float64
		ok bool
	}{{0, true}, {0.001, true}, {10, true}, {-1, false}, {0.0001, false}, {2e6, false}} {
		sc := Scenario{Exports: Exports{SliceDuration: c.d}}
		err := sc.Validate()
		bad := err != nil && strings.Contains(err.Error(), "exports.slice_duration")
		if bad == c.ok || !c.ok && !errors.Is(err, ErrInvalidScenario) {
			t.Errorf("slice_duration %v: %v; want ok=%v", c.d, err, c.ok)
		}
	}
}
