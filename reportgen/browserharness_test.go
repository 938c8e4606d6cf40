package reportgen

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBrowserHarnessSeesErrors is the failure path of the browser checks: a page that
// logs an error, throws, and tries the network is reported with all three.
func TestBrowserHarnessSeesErrors(t *testing.T) {
	b := startBrowser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "bad.html")
	html := `<!doctype html><html><body><svg class="chart-svg"><rect class="bar" width="5" height="5"/></svg>
<img src="http://127.0.0.1:9/x.png"><script>console.error("boom"); throw new Error("kaput");</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := b.open(ctx, fileURL(t, page))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.eval(ctx, p, `document.querySelectorAll("svg.chart-svg rect.bar").length`, &n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("bars = %d, want 1", n)
	}
	t.Logf("errors: %q", p.Errors)
	if len(p.Errors) < 3 {
		t.Errorf("errors = %q, want console.error, exception and network request", p.Errors)
	}
}
