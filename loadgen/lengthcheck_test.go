package loadgen

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

// A length spec that never draws a length >= 1 is a configuration error, not a panic
// when the first request is built (issue 26: sampling never panics for an accepted
// spec).
func TestValidateRefusesLengthsBelowOne(t *testing.T) {
	for _, field := range []string{"isl", "osl"} {
		var c Config
		c.URLs = []string{"http://127.0.0.1:1"}
		c.Requests = 1
		sp := distribution.MustSpec("fixed:0")
		if field == "isl" {
			c.ISL = sp
		} else {
			c.OSL = sp
		}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), field+" fixed:0: draws round to a length >= 1 with probability 0") {
			t.Errorf("%s fixed:0: Validate = %v", field, err)
		}
	}
}
