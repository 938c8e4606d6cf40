package gate

import (
	"cmp"
	"fmt"
	"strings"
)

// Difference is one workload setting on which two series differ.
type Difference struct {
	Field    string // the setting, named as in scenario files: "isl", "concurrency", "mock.ttft_ms"
	Baseline string // its value in the first scenario ("" = unset)
	Current  string // and in the second
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: baseline %s, current %s", d.Field, cmp.Or(d.Baseline, "(unset)"), cmp.Or(d.Current, "(unset)"))
}

// FieldWorkload is the Field of the [Difference] that refuses a comparison because a
// side's workload is unknown ([Series.Workload] nil): the gate cannot tell whether the
// two sides sent the same requests, so it does not compare them.
const FieldWorkload = "workload"

// unknownWorkload is how a side whose workload is unknown is shown.
const unknownWorkload = "unknown (the series carries no workload settings: read it with package perftest/run's LoadSeries, or describe it with run.DescribeSeries)"

// Diff returns the settings on which base and cur differ, in cur's order then base's,
// leaving out those named in ignore: a field ("concurrency") or a group ("mock" =
// every "mock.*" field).
func Diff(base, cur [][2]string, ignore []string) []Difference {
	ignored := func(f string) bool {
		for _, i := range ignore {
			if f == i || strings.HasPrefix(f, i+".") {
				return true
			}
		}
		return false
	}
	curM := map[string]string{}
	var order []string
	for _, kv := range cur {
		curM[kv[0]] = kv[1]
		order = append(order, kv[0])
	}
	baseM := map[string]string{}
	for _, kv := range base {
		baseM[kv[0]] = kv[1]
		if _, ok := curM[kv[0]]; !ok {
			order = append(order, kv[0])
		}
	}
	var ds []Difference
	for _, f := range order {
		if baseM[f] != curM[f] && !ignored(f) {
			ds = append(ds, Difference{Field: f, Baseline: baseM[f], Current: curM[f]})
		}
	}
	return ds
}

// WorkloadDiff returns the workload settings on which baseline and current differ
// (not those in ignore), or, when either side's workload is unknown, one [Difference]
// of Field [FieldWorkload] saying which: never an empty list for an unknown workload,
// so a series nobody described cannot pass as the same workload.
func WorkloadDiff(baseline, current *Series, ignore []string) []Difference {
	if baseline.Workload == nil || current.Workload == nil {
		d := Difference{Field: FieldWorkload, Baseline: "known", Current: "known"}
		if baseline.Workload == nil {
			d.Baseline = unknownWorkload
		}
		if current.Workload == nil {
			d.Current = unknownWorkload
		}
		return []Difference{d}
	}
	return Diff(baseline.Workload.Settings, current.Workload.Settings, ignore)
}

// workloadUnknown reports whether ds is the refusal of an unknown workload.
func workloadUnknown(ds []Difference) bool {
	return len(ds) == 1 && ds[0].Field == FieldWorkload
}
