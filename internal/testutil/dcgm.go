package testutil

import (
	_ "embed"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dcgmPage is a DCGM exporter's /metrics page for two GPUs with placeholders for the
// values (its header names the source).
//
//go:embed testdata/dcgm-exporter.txt
var dcgmPage string

// DCGM is a stub DCGM exporter for GPU telemetry tests: it serves
// testdata/dcgm-exporter.txt with values that change from one scrape to the next as a
// loaded GPU's do. GPU i draws Watts[i] on average: its power gauge swings ±10% around
// it from scrape to scrape, and its energy counter (mJ since "boot") grows by exactly
// Watts[i] joules a second of wall-clock time, so the energy over any window is
// Watts[i] × the window's length (power and energy samples carry their timestamps).
// Utilisation cycles through 40, 60, 80 and 100%, and the memory used grows by
// 100 MiB a scrape from 1,000 MiB (of 81,559 MiB).
type DCGM struct {
	URL   string     // the stub's /metrics ("" for a DCGM made by hand, to render pages)
	Watts [2]float64 // each GPU's mean power
	Boot  time.Time  // when the energy counters were 0

	mu      sync.Mutex
	scrapes int
}

// NewDCGM starts a stub DCGM exporter on 127.0.0.1 (closed by t's cleanup); URL is
// its /metrics.
func NewDCGM(t testing.TB, watts0, watts1 float64) *DCGM {
	t.Helper()
	d := &DCGM{Watts: [2]float64{watts0, watts1}, Boot: time.Now().Add(-time.Hour)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(d.Page(time.Now())))
	}))
	t.Cleanup(srv.Close)
	d.URL = srv.URL + "/metrics"
	return d
}

// Page renders the page as scraped at now (each call is one scrape).
func (d *DCGM) Page(now time.Time) string {
	d.mu.Lock()
	n := d.scrapes
	d.scrapes++
	d.mu.Unlock()
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	// Power and energy carry their timestamp (the exposition format's optional
	// milliseconds), and the energy is exact at it, so a window's energy does not
	// depend on how long the scrape took.
	ms := now.UnixMilli()
	secs := float64(ms-d.Boot.UnixMilli()) / 1000
	stamp := " " + strconv.FormatInt(ms, 10)
	swing := []float64{1, 1.1, 1, 0.9}[n%4]
	var pairs []string
	for i, w := range d.Watts {
		k := strconv.Itoa(i)
		used := 1000 + 100*float64(n)
		pairs = append(pairs,
			"{POWER"+k+"}", f(w*swing)+stamp,
			"{ENERGY"+k+"}", f(w*secs*1000)+stamp,
			"{UTIL"+k+"}", f(float64(40+20*(n%4))),
			"{USED"+k+"}", f(used),
			"{FREE"+k+"}", f(81559-used),
		)
	}
	return strings.NewReplacer(pairs...).Replace(dcgmPage)
}

// Scrapes returns how many times the page was rendered.
func (d *DCGM) Scrapes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.scrapes
}
