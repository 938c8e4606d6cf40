// Package merge makes the shard directories of one sharded run into one run
// (`perfgate merge`). It merges the client records in global index order and the mock
// recordings in receive order, then computes the metrics, exports, report and verdicts
// once, with the code a single run's directory gets (package run), and writes
// merge.json: the shards, their start skew and the merged counts.
//
//	o, rep, err := merge.Shards("merged", []string{"shard-0", "shard-1"}, merge.Options{})
//	if err != nil { … }              // errors.Is(err, merge.ErrShards): not one run's shards
//	fmt.Println(rep.Skewed, o.Check()) // shards that started late; the gate
//
// Directories whose scenarios differ (other than in shard index, start time and source
// addresses), that are not exactly shards 0..N-1 once each, or that hold two records
// with one global index are refused, naming them. docs/kubernetes.md has the workflow.
package merge
