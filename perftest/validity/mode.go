package validity

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/perfgate/perfgate/perftest/check"
)

// Mode is what a validity check does when it finds a run invalid: ModeFail (the run is
// an invalid measurement: [check.ErrInvalidRun], `perfgate profile` exits 1),
// ModeWarn (the verdict is reported, the run passes), or ModeOff (not checked). ""
// is the check's documented default.
type Mode string

// Modes.
const (
	ModeFail Mode = "fail"
	ModeWarn Mode = "warn"
	ModeOff  Mode = "off"
)

// Modes lists the values a [Mode] takes.
var Modes = []Mode{ModeFail, ModeWarn, ModeOff}

// ParseMode reports whether s is a [Mode] (or "", the default).
func ParseMode(s string) error {
	if s != "" && !slices.Contains(Modes, Mode(s)) {
		return fmt.Errorf("validity: mode %q: want fail, warn or off", s)
	}
	return nil
}

// Or returns m, or def when m is "" (the check's default).
func (m Mode) Or(def Mode) Mode { return cmp.Or(m, def) }

// Apply turns a verdict of a check that found the run invalid into its mode's form:
// fail keeps it failing, warn makes it pass (still Status Invalid, so it is shown as
// a warning). A valid verdict is returned as it is.
func Apply(v check.Verdict, m Mode) check.Verdict {
	if v.Status == check.Invalid && m == ModeWarn {
		v.Pass = true
	}
	return v
}
