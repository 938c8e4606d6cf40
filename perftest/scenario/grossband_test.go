package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/perftest/validity"
)

// TestGrossKeysYAML: the gross band's keys and max_schedule_lag read from a scenario
// file; a bad mode is refused naming the key.
func TestGrossKeysYAML(t *testing.T) {
	got, err := DecodeFile("v.yaml", []byte("rate: 100\nrequests: 10\nmax_schedule_lag: 10s\nvalidity:\n  client_bound_gross: warn\n  gross_send_lag: 200ms\n  min_achieved_rate: 0.8\n"), true)
	if err != nil || got.MaxScheduleLag != 10*time.Second || got.Validity.ClientBoundGross != validity.ModeWarn ||
		got.Validity.GrossSendLag != 200*time.Millisecond || got.Validity.MinAchievedRate != 0.8 {
		t.Errorf("ReadFile: %+v, max_schedule_lag %v, %v", got.Validity, got.MaxScheduleLag, err)
	}
	if sc, err := DecodeFile("v.yaml", []byte("rate: 100\nrequests: 10\nvalidity:\n  client_bound_gross: maybe\n"), true); err == nil {
		if err = sc.Validate(); err == nil || !strings.Contains(err.Error(), `validity.client_bound_gross "maybe"`) {
			t.Errorf("bad mode: %v", err)
		}
	} else if !strings.Contains(err.Error(), "client_bound_gross") {
		t.Errorf("bad mode: %v", err)
	}
}
