// Package history keeps every gated result of perfgate in a database and finds change
// points over commits. It reads back series of run-level statistics, change points in
// them (E-Divisive means with a Welch t-test, as Hunter and Apache Otava do), a static
// HTML report, CSV and JSON exports, and the check a nightly job runs to catch slow
// drift that a per-merge gate lets through one small step at a time.
//
// A [Store] is one small interface with two backends: SQLite (a single file, pure Go,
// the default) and PostgreSQL (a "postgres://" URL, for a history shared by CI runners).
// [Open] picks the backend from the address and migrates the schema to the version this
// perfgate knows ([SchemaVersion]); every write is one transaction, so a crash leaves
// the last complete result, and parallel writers neither lose nor duplicate results.
//
// A series is the results of one workload: the workload fingerprint ([Fingerprint]) and
// the scenario name. Its points are one value per result and metric (the geometric mean
// of the result's runs, [Center]), drawn with the interval of its runs.
package history
