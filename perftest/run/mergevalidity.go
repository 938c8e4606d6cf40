package run

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/validity"
)

// shardValidity is one shard's validity as a merged run keeps it (validity.json's
// "shards"): its client's self-measurement (each shard's client is a process of its
// own), what it measured with, and the validity verdicts it recorded.
type shardValidity struct {
	Index    int              `json:"index"`
	Dir      string           `json:"dir"`
	Self     *loadgen.Self    `json:"client,omitempty"`
	Pins     *Pins            `json:"pins,omitempty"`
	Verdicts []validityRecord `json:"verdicts,omitempty"`
}

// ShardDir is one shard of a merged run: its index and artifact directory.
type ShardDir struct {
	Index int
	Dir   string
}

// LoadMerged loads dir, the merged run of shards (in shard order; merge.Shards wrote
// dir from them), as [Load] loads a run, with the validity a merged recording cannot
// re-derive taken from the shards: each shard's client measured itself, and its
// limits and caches were its own. The merged run has no client of its own, and
// measured with the first shard's pins (its topology naming every shard).
func LoadMerged(dir string, shards []ShardDir) (*Outcome, error) {
	o, err := Load(dir)
	if err != nil {
		return nil, err
	}
	o.Self, o.shards = nil, nil
	for _, s := range shards {
		o.shards = append(o.shards, readShardValidity(s))
	}
	o.Pins = mergedPins(o.shards)
	return o, nil
}

// readShardValidity reads a shard directory's validity.json; a shard without one
// (written before it existed) has only its index and directory.
func readShardValidity(s ShardDir) shardValidity {
	v := shardValidity{Index: s.Index, Dir: s.Dir}
	if b, err := os.ReadFile(filepath.Join(s.Dir, ValidityFile)); err == nil {
		var doc validityDoc
		if json.Unmarshal(b, &doc) == nil {
			v.Self, v.Pins, v.Verdicts = doc.Self, doc.Pins, doc.Verdicts
		}
	}
	return v
}

// shardAborts says which shards of a merged run a load generator stopped early, and
// why: "shard I (DIR): reason", joined by "; " in shard order ("" = none). by is the
// merged run's kind (loadgen.Abort…): an invalid stop (the failed-request threshold,
// the schedule watch) before an objective one (an abort rule, over-saturation), so
// that a merged run is judged as its worst shard.
func (o *Outcome) shardAborts() (why, by string) {
	var parts []string
	rank := func(k string) int {
		if k == loadgen.AbortInvalid || k == loadgen.AbortSchedule {
			return 1
		}
		return 0
	}
	for _, s := range o.shards {
		if s.Self == nil || s.Self.Aborted == "" {
			continue
		}
		k := cmp.Or(s.Self.AbortedBy, loadgen.AbortSchedule) // recorded before AbortedBy existed
		parts = append(parts, fmt.Sprintf("shard %d (%s): %s", s.Index, s.Dir, s.Self.Aborted))
		if by == "" || rank(k) > rank(by) {
			by = k
		}
	}
	return strings.Join(parts, "; "), by
}

// mergedPins are what a merged run measured with: the first shard's revision, servers
// and topology, with the number of shards. The dataset fingerprint is left out: each
// shard's covers only its own requests (the shards' are in validity.json's "shards").
func mergedPins(shards []shardValidity) *Pins {
	for _, s := range shards {
		if s.Pins == nil {
			continue
		}
		p := *s.Pins
		p.Dataset = nil
		if p.Topology != nil {
			t := *p.Topology
			t.Shards = len(shards)
			p.Topology = &t
		}
		return &p
	}
	return nil
}

// shardValidityVerdicts are a merged run's validity verdicts that the merged
// recording cannot re-derive, from its shards: client-bound judged on each shard's
// own self-measurement, and each other check a shard recorded (its limits, a warm
// cache), one verdict per check, invalid when any shard's was. Steady state and tail
// samples are left to the merged data ([Outcome.Validity] evaluates them on it).
func (o *Outcome) shardValidityVerdicts() []check.Verdict {
	cfg := o.Scenario.Validity
	var vs []check.Verdict
	{
		// Each shard judged in its own band (marginal, gross, stopped early), at that
		// band's mode: the merged verdict fails when a shard's failed.
		var per []check.Verdict
		var idx []int
		for _, s := range o.shards {
			if s.Self == nil {
				continue
			}
			if v, m := validity.ClientBound(*s.Self, cfg, o.openLoop(), o.Mocked); m != validity.ModeOff {
				per, idx = append(per, validity.Apply(v, m)), append(idx, s.Index)
			}
		}
		if len(per) > 0 {
			v := validity.CombineShards(validity.CheckClientBound, per, idx, "client not the bottleneck in any shard")
			v.Pass = !slices.ContainsFunc(per, func(p check.Verdict) bool { return !p.Pass })
			vs = append(vs, v)
		}
	}
	type group struct {
		per []check.Verdict
		idx []int
	}
	groups := map[string]*group{}
	var order []string
	for _, s := range o.shards {
		for _, r := range s.Verdicts {
			switch r.Check {
			case validity.CheckSteady, validity.CheckTailSamples:
				continue // re-evaluated on the merged data
			case validity.CheckClientBound:
				if s.Self != nil {
					continue // re-judged above
				}
			}
			g := groups[r.Check]
			if g == nil {
				g = &group{}
				groups[r.Check] = g
				order = append(order, r.Check)
			}
			v := check.Verdict{Check: r.Check, Pass: r.Pass, Summary: r.Summary, Value: r.Value}
			if r.Status == check.Invalid.String() {
				v.Status = check.Invalid
			}
			g.per, g.idx = append(g.per, v), append(g.idx, s.Index)
		}
	}
	for _, c := range order {
		g := groups[c]
		v := validity.CombineShards(c, g.per, g.idx, "")
		switch c {
		case validity.CheckClientLimits:
			v.Pass = true // a warning: a limit that could not hold refuses the shard before its run
		case validity.CheckWarmCache:
			if m := cfg.WarmCache.Or(validity.ModeFail); m == validity.ModeOff {
				continue
			} else {
				v = validity.Apply(v, m)
			}
		case validity.CheckClientBound:
			if m := cfg.ClientBound.Or(validity.ModeWarn); m == validity.ModeOff {
				continue
			} else {
				v = validity.Apply(v, m)
			}
		}
		vs = append(vs, v)
	}
	return vs
}
