// Package record is the recording schema shared by perfgate's server and client sides.
// Its records are one JSON line per request, written by the mock server ([Server], its
// end-of-run [ServerSummary]) and by the load generator ([Client]); it also holds the
// [Metrics] computed from client records. reportgen and perftest read these types
// without importing the packages that write them.
//
//	enc := record.NewEncoder(w)      // safe for concurrent use
//	enc.Encode(rec)                  // one line per finished request
//	recs, err := record.ReadClient(r) // or record.Each to stream a long recording
//
// Field names follow AIPerf's mock-server recorder and its metric tags, so AIPerf's tooling
// reads perfgate's files and the other way round. The package is a leaf: it imports only
// the standard library and internal/jsonscan (the JSON scanning primitives). It holds
// data and its encoding, not measurement or statistics.
package record
