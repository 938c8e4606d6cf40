// Command table writes the performance tables of docs/performance.md and README.md from
// the benchmarks' own output. bench/table.sh runs them first, so the tables cannot
// drift from what the benchmarks print. Each row names the peer measured in the same
// run, the ratio, the target and whether it is met. The tables go between marker
// comments; everything else in both files is left as it is.
//
//	go run ./bench/table -out bench/out -docs docs/performance.md -readme README.md
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

func main() {
	out := flag.String("out", "bench/out", "directory of the benchmarks' output (loadgen.txt, mock.txt, openloop.txt)")
	docs := flag.String("docs", "docs/performance.md", "file of the full table")
	readme := flag.String("readme", "README.md", "file of the short table")
	note := flag.String("note", "", "a line about the run (date, machine, load) put above the full table")
	flag.Parse()
	if err := run(*out, *docs, *readme, *note); err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
}

func run(dir, docs, readme, note string) error {
	var in inputs
	var err error
	if in.loadgen, err = readLoadgen(filepath.Join(dir, "loadgen.txt")); err != nil {
		return err
	}
	if in.mock, err = readBench(filepath.Join(dir, "mock.txt")); err != nil {
		return err
	}
	if in.open, err = readBench(filepath.Join(dir, "openloop.txt")); err != nil {
		return err
	}
	rows := in.rows()
	full, short := render(rows, false), render(rows, true)
	if note != "" {
		full = note + "\n\n" + full
	}
	if err := replaceBlock(docs, "perf-table", full); err != nil {
		return err
	}
	if err := replaceBlock(readme, "perf-summary", short); err != nil {
		return err
	}
	for _, r := range rows {
		fmt.Printf("%-4s %s: %s\n", r.verdict(), r.what, r.ratio)
	}
	return nil
}

// inputs is what the benchmarks printed.
type inputs struct {
	loadgen loadgenOut
	mock    benches
	open    benches
}

// loadgenOut is bench/loadgen/run.sh's phase 1: each client's median req/s, and each
// ratio line's ratio of medians and median of the per-round ratios.
type loadgenOut struct {
	rate  map[string]float64
	ratio map[string][2]float64 // "loadgen/wrk" → {of medians, median per round}
}

var (
	rateLine  = regexp.MustCompile(`^(wrk|bare|vegeta|loadgen|loadgen_synthetic)\s+([0-9]+)\s+\[`)
	ratioLine = regexp.MustCompile(`^ratio (\S+)\s+([0-9.]+)\s+\(per round: .*; median ([0-9.]+)\)`)
)

func readLoadgen(path string) (loadgenOut, error) {
	o := loadgenOut{rate: map[string]float64{}, ratio: map[string][2]float64{}}
	err := eachLine(path, func(line string) error {
		if m := rateLine.FindStringSubmatch(line); m != nil {
			o.rate[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
		if m := ratioLine.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseFloat(m[2], 64)
			b, _ := strconv.ParseFloat(m[3], 64)
			o.ratio[m[1]] = [2]float64{a, b}
		}
		return nil
	})
	if err == nil && (o.rate["loadgen"] == 0 || len(o.ratio) == 0) {
		err = fmt.Errorf("%s: no loadgen rates or ratios (run bench/loadgen/run.sh phase 1)", path)
	}
	return o, err
}

// benches maps a benchmark's name (without the -GOMAXPROCS suffix) to its metrics by
// unit, from the last line that reported it.
type benches map[string]map[string]float64

var procSuffix = regexp.MustCompile(`-[0-9]+$`)

func readBench(path string) (benches, error) {
	b := benches{}
	err := eachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			return nil
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("%s: %q: metric %q is not a number", path, line, f[i])
			}
			m[f[i+1]] = v
		}
		b[procSuffix.ReplaceAllString(f[0], "")] = m
		return nil
	})
	return b, err
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// row is one line of the table.
type row struct {
	what, ours, peer, ratio, target string
	met                             *bool // nil: no target
	short                           bool  // also in the README's table
}

func (r row) verdict() string {
	switch {
	case r.met == nil:
		return ""
	case *r.met:
		return "met"
	}
	return "not met"
}

func check(ok bool) *bool { return &ok }

// rows builds the table: issue 23's targets first, then the figures that must not
// regress.
func (in inputs) rows() []row {
	lg := in.loadgen
	var rows []row
	ratio := func(key string) string {
		r := lg.ratio[key]
		return fmt.Sprintf("%.2f (per round %.2f)", r[0], r[1])
	}
	// A target is met when both the ratio of the medians and the median of the
	// per-round ratios meet it.
	atLeast := func(key string, t float64) *bool { r := lg.ratio[key]; return check(r[0] >= t && r[1] >= t) }
	rows = append(rows,
		row{"loadgen: non-streaming req/s, recording on, 64 connections", rate(lg.rate["loadgen"]), "wrk " + rate(lg.rate["wrk"]), ratio("loadgen/wrk"), "≥ 0.8", atLeast("loadgen/wrk", 0.8), true},
		row{"loadgen: the same against a bare fasthttp client loop", rate(lg.rate["loadgen"]), "bare loop " + rate(lg.rate["bare"]), ratio("loadgen/bare"), "≥ 0.9", atLeast("loadgen/bare", 0.9), true},
		row{"loadgen: synthetic prompts (exact ISL), recording on", rate(lg.rate["loadgen_synthetic"]), "fixed payload " + rate(lg.rate["loadgen"]), ratio("synthetic/loadgen"), "≥ 0.8", atLeast("synthetic/loadgen", 0.8), true},
	)
	if _, ok := lg.ratio["loadgen/vegeta"]; ok {
		rows = append(rows, row{what: "loadgen: the same against vegeta (library, capped workers)", ours: rate(lg.rate["loadgen"]), peer: "vegeta " + rate(lg.rate["vegeta"]), ratio: ratio("loadgen/vegeta"), target: "—"})
	}
	if m := in.mock["BenchmarkNonStreamingWrk"]; m != nil {
		rows = append(rows,
			row{"mock: non-streaming req/s, recording on, gpt2 tokenization, wrk -c64", rate(m["mock-req/s"]), "trivial fasthttp server " + rate(m["trivial-req/s"]), fmt.Sprintf("%.2f", m["ratio"]), "≥ 0.5", check(m["ratio"] >= 0.5), true},
			row{what: "mock: server CPU per non-streaming request (same run)", ours: fmt.Sprintf("%.1f µs", m["mock-cpu-µs/req"]), peer: fmt.Sprintf("trivial server %.1f µs", m["trivial-cpu-µs/req"]), ratio: fmt.Sprintf("%.2f", m["mock-cpu-µs/req"]/m["trivial-cpu-µs/req"]), target: "—"},
		)
	}
	if o := in.open["BenchmarkOpenLoopCost/rate=5000"]; o != nil {
		accPeer := fmt.Sprintf("less the run's least (jitter) %.3f / %.3f ms", o["jitter_mean_ms"], o["jitter_p99_ms"])
		if p99, ok := o["bare_p99_ms"]; ok {
			// The machine's own timer wake-up latency, measured in the same iteration.
			accPeer = fmt.Sprintf("bare nanosleep waiter late %.3f / %.3f ms; %s", o["bare_mean_ms"], p99, accPeer)
		}
		accRatio := "—"
		if p99, ok := o["loaded_p99_ms"]; ok {
			// The send loop's sleep alone beside a closed loop at the same rate: how late
			// a sleeping send loop wakes at this load, the floor the targets sit under.
			accPeer = fmt.Sprintf("the loop's sleep alone under the same load late %.3f / %.3f ms; %s", o["loaded_mean_ms"], p99, accPeer)
			accRatio = fmt.Sprintf("%.2f / %.2f", o["dev_mean_ms"]/o["loaded_mean_ms"], o["dev_p99_ms"]/p99)
		}
		rows = append(rows,
			row{"loadgen: CPU per 16-token streamed request, open loop, Poisson 5,000 req/s", fmt.Sprintf("%.0f µs (%.0f req/s)", o["cpu_us/req_open"], o["req/s_open"]), fmt.Sprintf("closed loop %.0f µs (%.0f req/s)", o["cpu_us/req_closed"], o["req/s_closed"]), fmt.Sprintf("%.2f", o["open/closed"]), "≤ 1.5", check(o["open/closed"] <= 1.5), true},
			row{"loadgen: send accuracy at 5,000 req/s, server arrival − schedule, mean / p99", fmt.Sprintf("%.3f / %.3f ms", o["dev_mean_ms"], o["dev_p99_ms"]), accPeer, accRatio, "≤ 0.03 / 0.2 ms", check(o["dev_mean_ms"] <= 0.03 && o["dev_p99_ms"] <= 0.2), true},
		)
	}
	var ours, peer, ratios []string
	for _, n := range []string{"1", "100", "1000"} {
		if m := in.mock["BenchmarkStream/streams="+n]; m != nil {
			ours, peer, ratios = append(ours, rate(m["mock-tok/s"])), append(peer, rate(m["ref-tok/s"])), append(ratios, fmt.Sprintf("%.2f", m["ratio"]))
		}
	}
	if len(ours) > 0 {
		rows = append(rows, row{what: "mock: streamed tok/s at 1 / 100 / 1,000 streams, recording on", ours: strings.Join(ours, " / "), peer: "minimal fasthttp SSE loop " + strings.Join(peer, " / "), ratio: strings.Join(ratios, " / "), target: "no regression (1.24–1.39 in issue 23)"})
	}
	if m := in.mock["BenchmarkMemoryPerStream"]; m != nil {
		rows = append(rows, row{"mock: memory per open stream", fmt.Sprintf("%.1f KiB", m["KiB/stream"]), "—", "—", "≤ 40 KB", check(m["KiB/stream"]*1024 <= 40e3), false})
	}
	var late, floor, lr []string
	for _, k := range []string{"5k", "10k", "20k", "30k", "50k"} {
		if m := in.mock["BenchmarkLateness/tok/s="+k]; m != nil {
			late, floor, lr = append(late, ms(m["p99-late-µs"])), append(floor, ms(m["floor-p99-µs"])), append(lr, fmt.Sprintf("%.2f", m["p99-ratio"]))
		}
	}
	if len(late) > 0 {
		rows = append(rows, row{what: "mock: emission lateness p99 at 5k / 10k / 20k / 30k / 50k paced tok/s (ms)", ours: strings.Join(late, " / "), peer: "Go timers alone " + strings.Join(floor, " / "), ratio: strings.Join(lr, " / "), target: "≤ 1.2 × the timers' (no regression)"})
	}
	return rows
}

func rate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func ms(us float64) string { return fmt.Sprintf("%.2f", us/1e3) }

// header is both tables' header: the README's is the same table, fewer rows.
const header = "| what | perfgate | peer, same run | ratio | target | met |\n|---|---|---|---|---|---|\n"

func render(rows []row, short bool) string {
	var b strings.Builder
	b.WriteString(header)
	for _, r := range rows {
		if short && !r.short {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.what, r.ours, r.peer, r.ratio, r.target, r.verdict())
	}
	return b.String()
}

// replaceBlock replaces what lies between "<!-- NAME:begin ... -->" and
// "<!-- NAME:end -->" in path with body.
func replaceBlock(path, name, body string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	begin, end := "<!-- "+name+":begin", "<!-- "+name+":end -->"
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s … %s markers", path, begin+" -->", end)
	}
	i += strings.Index(s[i:], "-->") + len("-->")
	if i > j {
		return errors.New(path + ": the begin marker is not closed")
	}
	s = s[:i] + "\n" + body + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
