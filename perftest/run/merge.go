package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/reportgen"
)

// Files of a sharded run.
const (
	// ShardFile is written by [Run] into a shard's artifact directory
	// (Client.Shards > 1): which shard it was and how its start was synchronised.
	ShardFile = "shard.json"
	// MergeFile is written by merge.Shards (package perftest/merge): the shards merged
	// and their start skew.
	MergeFile = "merge.json"
)

// ShardInfo describes one shard's run: written as shard.json, read by merge.Shards.
type ShardInfo struct {
	Index  int `json:"index"`
	Shards int `json:"shards"`
	// StartAt is T0 on the coordinator's clock (or --start-at); zero if the shard
	// started at once. LocalStartAt is T0 on the shard's clock (StartAt − Offset).
	StartAt      time.Time `json:"start_at,omitzero"`
	LocalStartAt time.Time `json:"local_start_at,omitzero"`
	// Offset is the coordinator's clock minus the shard's, measured over RTT (the
	// smallest of a few round trips; the offset's error is at most RTT/2).
	Offset time.Duration `json:"offset_ns"`
	RTT    time.Duration `json:"rtt_ns"`
	// Coordinator is the barrier's URL ("" = none).
	Coordinator string `json:"coordinator,omitempty"`
	// RegisteredLate: the shard registered after the barrier had fixed T0.
	// Missing lists the shards the barrier had not heard from when it fixed T0.
	RegisteredLate bool  `json:"registered_late,omitempty"`
	Missing        []int `json:"missing_at_start,omitempty"`
	// StartLate is how long after LocalStartAt the shard's run could start
	// (loadgen.Outcome.StartLate).
	StartLate time.Duration `json:"start_late_ns"`
	// Host is the shard's host name.
	Host string `json:"host,omitempty"`
}

// Skew bounds how far the shard's run clock may have started from T0: StartLate plus
// RTT/2.
func (s ShardInfo) Skew() time.Duration { return s.StartLate + s.RTT/2 }

// WithShard returns an option recording how the shard's start was synchronised
// (written into shard.json with the run's own StartLate). Without it a sharded run
// writes its index alone.
func WithShard(info ShardInfo) RunOption { return withShard{info} }

type withShard struct{ info ShardInfo }

func (o withShard) apply(c *runConfig) { c.shard = &o.info }
func (o withShard) String() string {
	return fmt.Sprintf("run.WithShard(%d/%d)", o.info.Index, o.info.Shards)
}

// writeShard writes shard.json for a sharded run.
func writeShard(dir string, cfg loadgen.Config, rc runConfig, lo *loadgen.Outcome) error {
	if dir == "" || cfg.Shards <= 1 {
		return nil
	}
	var info ShardInfo
	if rc.shard != nil {
		info = *rc.shard
	}
	info.Index, info.Shards = cfg.ShardIndex, cfg.Shards
	if info.LocalStartAt.IsZero() {
		info.LocalStartAt = cfg.StartAt
	}
	if info.StartAt.IsZero() {
		info.StartAt = cfg.StartAt
	}
	if lo != nil {
		info.StartLate = lo.StartLate
	}
	info.Host, _ = os.Hostname()
	return reportgen.WriteFileAtomic(filepath.Join(dir, ShardFile), func(w io.Writer) error { return reportgen.WriteJSON(w, info) })
}
