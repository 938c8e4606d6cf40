package validity

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
)

// CombineShards makes one verdict of check from the shards' (per, of shards idx):
// invalid and failing when any shard's was invalid or failed (a mode applied after
// decides whether it fails the merged run); each shard's summary is a line of
// evidence. ok is the summary when none was ("" = the first shard's).
func CombineShards(name string, per []check.Verdict, idx []int, ok string) check.Verdict {
	v := check.Verdict{Check: name, Pass: true}
	var bad []string
	for i, p := range per {
		v.Evidence = append(v.Evidence, check.Line{Label: fmt.Sprintf("shard %d", idx[i]), Text: p.Summary})
		v.Value, v.Unit = max(v.Value, p.Value), p.Unit
		if p.Status == check.Invalid {
			v.Status = check.Invalid
		}
		if p.Status == check.Invalid || !p.Pass {
			v.Pass = false
			bad = append(bad, fmt.Sprintf("shard %d: %s", idx[i], p.Summary))
		}
	}
	switch {
	case len(bad) > 0:
		v.Summary = strings.Join(bad, "; ")
	case ok != "":
		v.Summary = ok
	case len(per) > 0:
		v.Summary = per[0].Summary
	}
	return v
}
