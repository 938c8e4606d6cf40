package history

import (
	"encoding/csv"
	"strconv"
	"time"

	"io"
)

// CSVHeader is the header row of [WriteCSV].
var CSVHeader = []string{"result_id", "scenario", "fingerprint", "commit", "branch", "build", "created", "perfgate_version", "host", "topology", "artifacts", "run", "metric", "value"}

// WriteCSV writes one row per result, run and statistic: the long format that
// spreadsheets, pandas and SQL read without unpacking.
func WriteCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range rs {
		for _, run := range r.Runs {
			for _, m := range sortedKeys(run.Stats) {
				if err := cw.Write([]string{strconv.FormatInt(r.ID, 10), r.Scenario, r.Fingerprint, r.Commit, r.Branch, r.Build,
					r.Created.Format(time.RFC3339Nano), r.Version, r.Host, r.Topology, r.Artifacts, strconv.Itoa(run.Run), m,
					strconv.FormatFloat(run.Stats[m], 'g', -1, 64)}); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
