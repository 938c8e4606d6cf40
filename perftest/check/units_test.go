package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// TestEveryCatalogueUnit walks every unit a catalogue metric may have through a rule:
// a per-request metric in that unit is added to the catalogue, and its value is parsed
// (with and without the unit's suffix), compared (a passing and a failing bound) and
// printed (the verdict shows the value and the limit in the unit). A unit with no
// check.Unit, or one shown as another (an image count as seconds), fails here.
func TestEveryCatalogueUnit(t *testing.T) {
	us := metric.Units()
	if len(us) == 0 {
		t.Fatal("metric.Units is empty")
	}
	for u := range catalogueUnits {
		if !slices.Contains(us, u) {
			t.Errorf("catalogueUnits maps %q, which is not one of metric.Units", u)
		}
	}
	for _, d := range metric.Catalogue() {
		if _, ok := CatalogueUnit(d.Unit); !ok {
			t.Errorf("catalogue metric %s: unit %q has no check.Unit", d.Name, d.Unit)
		}
	}
	// How a verdict prints 2 of each catalogue unit (2 ms for "ms"): a unit missing here,
	// or printed as another, fails.
	printed := map[string]string{
		metric.UnitMS: "2ms", metric.UnitSec: "2s", metric.UnitTokens: "2", metric.UnitTokPerUser: "2 tok/s",
		metric.UnitTokPerSec: "2 tok/s", metric.UnitRequests: "2 req", metric.UnitReqPerSec: "2 req/s",
		metric.UnitImages: "2 img", metric.UnitImgPerSec: "2 img/s", metric.UnitAudioRate: "2 audio s/s",
		metric.UnitRatio: "2", metric.UnitJoules: "2 J", metric.UnitWatts: "2 W", metric.UnitMiB: "2 MiB",
		metric.UnitTokPerJ: "2 tok/J", metric.UnitJPerReq: "2 J/req", metric.UnitTokPerGPU: "2 tok/s/GPU",
		metric.UnitJobsPerHour: "2 jobs/h", metric.UnitSessions: "2 sessions",
	}
	// Ten requests whose OSL is 1…10; the metric's value is the OSL in its unit.
	var cs []record.Client
	for i := 1; i <= 10; i++ {
		cs = append(cs, record.Client{Index: i, Sent: 0, Done: time.Duration(i) * time.Millisecond, OSL: i, UsagePromptTokens: -1})
	}
	for _, u := range us {
		t.Run(u, func(t *testing.T) {
			cu, ok := CatalogueUnit(u)
			if !ok {
				t.Fatalf("no check.Unit for catalogue unit %q", u)
			}
			two := 2.0
			if u == metric.UnitMS {
				two = 0.002
			}
			if got, ok := printed[u]; !ok || cu.Format(two) != got {
				t.Errorf("2 %s prints as %q, want %q", u, cu.Format(two), got)
			}
			restore := metric.Extend(metric.Def{Name: "unit_walk", Header: "Unit Walk", Label: "unit walk", Unit: u,
				Kind: metric.PerRequest, Origin: "test", Help: "OSL in the unit under test.",
				Value: func(q *metric.Request) (float64, bool) { return float64(q.OSL), true }})
			defer restore()
			if got := Metric("unit_walk").Unit(); got != cu {
				t.Fatalf("Metric.Unit = %q, want %q", got, cu)
			}
			reqs := FromClient(cs)
			max := 10.0 // the p100, in cu
			if u == metric.UnitMS {
				max = 0.010 // Sample converts ms to seconds
			}
			bare := strconv.FormatFloat(max, 'g', -1, 64) // a bare number: ms for a latency
			if cu == Seconds {
				bare = strconv.FormatFloat(max*1e3, 'g', -1, 64)
			}
			for _, text := range []string{cu.Format(max), bare} {
				r, err := ParseRule("unit_walk_p100<=" + text)
				if err != nil {
					t.Fatalf("ParseRule(unit_walk_p100<=%s): %v", text, err)
				}
				if r.value != max {
					t.Errorf("unit_walk_p100<=%s reads the limit as %v, want %v %s", text, r.value, max, cu)
				}
				v := r.Check(reqs, record.Metrics{}, SLO{}, 0)
				want := fmt.Sprintf("unit walk max = %s <= %s", cu.Format(max), cu.Format(max))
				if !v.Pass || v.Unit != cu || v.Summary != want {
					t.Errorf("unit_walk_p100<=%s: pass %v, unit %q, summary %q; want a pass in %q, %q", text, v.Pass, v.Unit, v.Summary, cu, want)
				}
			}
			// Half the maximum fails, and says so in the unit.
			half := cu.Format(max / 2)
			v := MustRule("unit_walk_p100<="+half).Check(reqs, record.Metrics{}, SLO{}, 0)
			if want := fmt.Sprintf("unit walk max = %s, want <= %s", cu.Format(max), half); v.Pass || v.Summary != want {
				t.Errorf("unit_walk_p100<=%s: pass %v, summary %q; want a failure, %q", half, v.Pass, v.Summary, want)
			}
			// What a verdict prints reads back as the value printed.
			for _, x := range []float64{0.25, 2, 180, 1500} {
				if cu == Fraction && x > 1 {
					continue
				}
				back, err := cu.Parse(cu.Format(x))
				if err != nil || back != x {
					t.Errorf("%q.Parse(%q) = %v, %v; want %v", cu, cu.Format(x), back, err, x)
				}
			}
		})
	}
}

// TestUnitParseErrors: a limit that is not a number in the unit is refused, naming it.
func TestUnitParseErrors(t *testing.T) {
	for _, c := range []struct {
		u    Unit
		text string
	}{{Images, "2 tok"}, {Tokens, "many"}, {ImgPerSec, "1 img"}, {None, "2 x"}, {Seconds, "fast"}, {Fraction, "most"}, {Unit("furlongs"), "1"}} {
		if x, err := c.u.Parse(c.text); err == nil {
			t.Errorf("%q.Parse(%q) = %v, want an error", c.u, c.text, x)
		}
	}
}

// TestExtendRefusesAnUnknownUnit: a metric in a unit no consumer maps is refused when it
// is added, not shown in seconds later.
func TestExtendRefusesAnUnknownUnit(t *testing.T) {
	defer func() {
		if e := recover(); e == nil || !strings.Contains(fmt.Sprint(e), `unit "furlongs"`) {
			t.Errorf("Extend with unit furlongs: panic %v, want one naming the unit", e)
		}
	}()
	restore := metric.Extend(metric.Def{Name: "bad_unit", Header: "Bad", Unit: "furlongs", Kind: metric.PerRequest, Origin: "test",
		Value: func(*metric.Request) (float64, bool) { return 1, true }})
	restore()
}

// TestImageRulesAreCounts: the bug this mapping fixes. generated_images_p50>=2 read "2"
// as 2 ms, and image throughput printed as seconds.
func TestImageRulesAreCounts(t *testing.T) {
	r := MustRule("generated_images_p50>=2")
	if r.value != 2 || Metric("generated_images").Unit() != Images {
		t.Errorf("generated_images_p50>=2: limit %v in %q, want 2 images", r.value, Metric("generated_images").Unit())
	}
	if u := Metric("image_throughput").Unit(); u != ImgPerSec {
		t.Errorf("image_throughput unit %q, want %q", u, ImgPerSec)
	}
	if u := Metric("audio_duration").Unit(); u != Seconds {
		t.Errorf("audio_duration unit %q, want %q", u, Seconds)
	}
}

// TestUnitOf: a run-level ratio is a fraction shown as a percentage (the error rate, a
// prefix-cache hit rate); a per-request ratio is a plain number (RTFx can exceed 1);
// every other metric is in its unit's check.Unit.
func TestUnitOf(t *testing.T) {
	for name, want := range map[string]Unit{
		record.MetricErrorRate: Fraction, record.MetricPrefixCacheHitRate: Fraction, record.MetricRTFx: None,
		record.MetricTTFT: Seconds, record.MetricOutputTokenThroughput: TokPerSec, record.MetricGeneratedImages: Images,
		record.MetricAudioThroughput: AudioRate, record.MetricRequestCount: Requests,
	} {
		d, ok := metric.Lookup(name)
		if got := UnitOf(d); !ok || got != want {
			t.Errorf("UnitOf(%s) = %q (known %v), want %q", name, got, ok, want)
		}
	}
}
