package mockbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Wrk runs wrk (two threads, conc connections, for d) posting body to rawURL and
// returns its requests per second. wrk is a separate process, so the server's process
// does no client work.
func Wrk(rawURL string, body []byte, conc int, d time.Duration) (float64, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return 0, fmt.Errorf("wrk is not installed (apt-get install -y wrk): %w", err)
	}
	dir, err := os.MkdirTemp("", "mockbench-wrk")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "post.lua")
	lua := fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %s\nwrk.headers[\"Content-Type\"] = \"application/json\"\n", luaString(string(body)))
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		return 0, err
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	out, err := exec.Command(bin, "-t2", "-c"+strconv.Itoa(conc), "-d"+strconv.Itoa(secs)+"s", "-s", script, rawURL).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("wrk: %w: %s", err, out)
	}
	if m := regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`).FindSubmatch(out); m != nil {
		return 0, fmt.Errorf("wrk: %s answers were not 2xx: %s", m[1], out)
	}
	m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("wrk: no Requests/sec in %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// luaString quotes s as a Lua long-bracket-free string literal.
func luaString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
