package reportgen

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// This file is a tiny Chrome DevTools Protocol client over --remote-debugging-pipe
// (fd 3: commands to the browser, fd 4: replies and events; messages end with NUL),
// written with the standard library only. The browser tests load each report from disk
// (file://), read console errors and exceptions, query the DOM, and keep a screenshot.

type cdpMsg struct {
	ID        int64                     `json:"id,omitempty"`
	Method    string                    `json:"method,omitempty"`
	Params    json.RawMessage           `json:"params,omitempty"`
	Result    json.RawMessage           `json:"result,omitempty"`
	Error     *struct{ Message string } `json:"error,omitempty"`
	SessionID string                    `json:"sessionId,omitempty"`
}

type browser struct {
	cmd     *exec.Cmd
	w       *os.File
	profile string
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMsg
	events  chan cdpMsg
	done    chan struct{}
}

// sharedBrowser returns the package's one headless Chromium, started on first use and
// closed by TestMain (starting it costs seconds; every browser test shares it).
func sharedBrowser(t testing.TB) *browser {
	t.Helper()
	bin := testutil.Chromium(t)
	browserOnce.Do(func() { theBrowser, browserErr = launch(bin) })
	if browserErr != nil {
		t.Fatalf("start %s: %v", bin, browserErr)
	}
	return theBrowser
}

var (
	browserOnce sync.Once
	theBrowser  *browser
	browserErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if theBrowser != nil {
		theBrowser.close()
	}
	os.Exit(code)
}

func launch(bin string) (*browser, error) {
	profile, err := os.MkdirTemp("", "perfgate-chromium-")
	if err != nil {
		return nil, err
	}
	toBrowserR, toBrowserW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromBrowserR, fromBrowserW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--remote-debugging-pipe", "--user-data-dir="+profile, "--window-size=1280,900", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW}
	cmd.Stderr = &tailBuffer{max: 4000}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	toBrowserR.Close()
	fromBrowserW.Close()
	b := &browser{cmd: cmd, w: toBrowserW, profile: profile, pending: map[int64]chan cdpMsg{}, events: make(chan cdpMsg, 1024), done: make(chan struct{})}
	go b.readLoop(fromBrowserR)
	return b, nil
}

// close asks the browser to exit, kills it if it does not, and removes its profile.
func (b *browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, _ = b.call(ctx, "", "Browser.close", nil)
	cancel()
	wait := make(chan error, 1)
	go func() { wait <- b.cmd.Wait() }()
	select {
	case <-wait:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-wait
	}
	b.w.Close()
	os.RemoveAll(b.profile)
}

// tailBuffer keeps the last max bytes written (chromium's stderr, for failure logs).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (b *browser) readLoop(r *os.File) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMsg
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // drop events nobody reads
		}
	}
}

// call sends a command (to a page session when session != "") and waits for its reply.
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMsg, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.w.Write(append(data, 0)); err != nil {
		return nil, fmt.Errorf("cdp %s: write: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("cdp %s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("cdp %s: browser exited", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("cdp %s: %w", method, ctx.Err())
	}
}

// pageLoad is what a page did when loaded: its console errors and a screenshot.
type pageLoad struct {
	session    string
	target     string
	Errors     []string // console.error calls, uncaught exceptions, error log entries
	Screenshot []byte   // PNG
}

// open loads url in a new page, waits for the load event and a short settle, and
// collects console errors, uncaught exceptions and failed loads (e.g. network requests).
func (b *browser) open(ctx context.Context, url string) (*pageLoad, error) {
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return nil, err
	}
	var tgt struct{ TargetID string }
	_ = json.Unmarshal(res, &tgt)
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var att struct{ SessionID string }
	_ = json.Unmarshal(res, &att)
	p := &pageLoad{session: att.SessionID, target: tgt.TargetID}
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable", "Network.enable"} {
		if _, err := b.call(ctx, p.session, m, nil); err != nil {
			return nil, err
		}
	}
	if _, err := b.call(ctx, p.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}); err != nil {
		return nil, err
	}
	if _, err := b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}); err != nil {
		return nil, err
	}
	loaded := false
	settle := time.After(30 * time.Second)
	for {
		var timeout <-chan time.Time
		if loaded {
			timeout = time.After(300 * time.Millisecond)
		}
		select {
		case m := <-b.events:
			if m.SessionID != p.session {
				continue
			}
			p.note(m)
			if m.Method == "Page.loadEventFired" {
				loaded = true
			}
		case <-timeout:
			return p, nil
		case <-settle:
			return p, errors.New("page did not fire its load event within 30s")
		case <-ctx.Done():
			return p, ctx.Err()
		case <-b.done:
			return p, errors.New("browser exited")
		}
	}
}

func (p *pageLoad) note(m cdpMsg) {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string
			Args []struct {
				Value       any
				Description string
			}
		}
		_ = json.Unmarshal(m.Params, &e)
		if e.Type == "error" || e.Type == "assert" {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, fmt.Sprint(a.Value, a.Description))
			}
			p.Errors = append(p.Errors, "console."+e.Type+": "+strings.Join(parts, " "))
		}
	case "Runtime.exceptionThrown":
		var e struct {
			ExceptionDetails struct {
				Text      string
				Exception struct{ Description string }
			}
		}
		_ = json.Unmarshal(m.Params, &e)
		p.Errors = append(p.Errors, "exception: "+e.ExceptionDetails.Text+" "+e.ExceptionDetails.Exception.Description)
	case "Log.entryAdded":
		var e struct {
			Entry struct{ Level, Text, URL string }
		}
		_ = json.Unmarshal(m.Params, &e)
		if e.Entry.Level == "error" {
			p.Errors = append(p.Errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case "Network.requestWillBeSent":
		var e struct {
			Request struct{ URL string }
		}
		_ = json.Unmarshal(m.Params, &e)
		if u := e.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
			p.Errors = append(p.Errors, "network request (reports must be self-contained): "+u)
		}
	}
}

// closePage closes the page's tab.
func (b *browser) closePage(p *pageLoad) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = b.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": p.target})
}

// stderr returns the tail of the browser's stderr, for failure messages.
func (b *browser) stderr() string {
	tb := b.cmd.Stderr.(*tailBuffer)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return string(tb.b)
}

// eval evaluates a JavaScript expression in the page and decodes its value into out.
func (b *browser) eval(ctx context.Context, p *pageLoad, expr string, out any) error {
	res, err := b.call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return err
	}
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("eval %q: %s", expr, r.ExceptionDetails.Text)
	}
	return json.Unmarshal(r.Result.Value, out)
}

// screenshot captures the full page as PNG.
func (b *browser) screenshot(ctx context.Context, p *pageLoad) ([]byte, error) {
	res, err := b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	if err != nil {
		return nil, err
	}
	var r struct{ Data string }
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

// viewport sets the page's window to w×h CSS pixels (mobile: as a phone lays a page
// out, honouring its viewport meta tag), as the next evaluation sees it.
func (b *browser) viewport(ctx context.Context, p *pageLoad, w, h int, mobile bool) error {
	_, err := b.call(ctx, p.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": mobile})
	return err
}

// screenshotScreen captures what the window shows (the first screen), as PNG.
func (b *browser) screenshotScreen(ctx context.Context, p *pageLoad) ([]byte, error) {
	res, err := b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		return nil, err
	}
	var r struct{ Data string }
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

// fileURL turns a path into a file:// URL.
func fileURL(t testing.TB, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(abs)
}

// openReport writes a report with write into dir/name.html, loads it in b, and fails
// t on every error the page raises. The page is closed when t ends; the context bounds
// what t does with it.
func openReport(t *testing.T, b *browser, dir, name string, write func(io.Writer) error) (context.Context, *pageLoad) {
	t.Helper()
	path := filepath.Join(dir, name+".html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Bounded by the test binary's -timeout, not a fixed minute: beside a CPU burner a
	// screenshot of a whole report took longer than 60 s while nothing was wrong.
	ctx, cancel := testutil.Context(t)
	t.Cleanup(cancel)
	p, err := b.open(ctx, fileURL(t, path))
	if err != nil {
		t.Fatalf("load %s: %v\nchromium stderr (tail):\n%s", path, err, b.stderr())
	}
	t.Cleanup(func() { b.closePage(p) })
	for _, e := range p.Errors {
		t.Errorf("%s: %s", name, e)
	}
	return ctx, p
}
