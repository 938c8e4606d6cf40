package record

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes JSON and YAML as Go duration text
// such as "1.5s": perfgate's one form of a duration in files (scenario files, the
// scenario.json of a run, SLOs and bounds, the server-metrics block) and JSON. A bare
// number is an error: it has no unit.
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses a time.ParseDuration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON accepts Go duration text ("200ms"); a bare number is an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("record: duration %s: %s", b, DurationForm)
	}
	return d.UnmarshalText([]byte(s))
}

// ParseDuration reads Go duration text ("250ms", "1.5s") as [Duration] does, with an
// error that quotes [DurationForm].
func ParseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("record: duration %q: %s", s, DurationForm)
	}
	return v, nil
}

// DurationForm says what a duration in a file must look like; the messages about a
// bare number quote it.
const DurationForm = `want Go duration text such as "250ms" or "30s" (a bare number has no unit)`
