// Package reportgen turns a run's records and metrics into what people read: the
// console table, AIPerf-compatible exports and self-contained HTML reports.
//
//	reportgen.WriteTable(os.Stdout, metrics, reportgen.TableOptions{Width: 100})
//	paths, err := reportgen.WriteExports("artifacts/run1", reportgen.Run{
//		Records: recs, Metrics: metrics, Manifest: reportgen.Manifest{Seed: 42}}, reportgen.ExportOptions{})
//	err = reportgen.WriteCompareReport(f, a, b, reportgen.CompareOptions{})
//
// Exports use AIPerf's file names (profile_export_aiperf.json keyed by metric tag with
// unit, avg, min, max, p1…p99 and std; profile_export_aiperf.csv; profile_export.jsonl),
// so dashboards that read AIPerf read perfgate. Every export directory gets a manifest
// (perfgate_manifest.json: version, scenario, seed, tokenizer fingerprint, host facts),
// written last; files are written to temporary names and renamed when complete.
//
// The HTML reports are single files with inline SVG charts and no scripts, so they open
// offline and can be attached to a CI run. Percentiles everywhere are numpy's default
// linear interpolation; standard deviations are population ones (ddof=0), as AIPerf's.
//
// reportgen only reports: it does not run load or decide pass/fail (perftest/check
// does). It imports only distribution, metric, record, reportgen/sweep and
// servermetrics: none of the packages that run load, so a report can be rebuilt from a
// run's files alone. Its functions are safe for concurrent use; they never print to
// stdout.
package reportgen
