// Package pgtest starts throwaway PostgreSQL clusters for tests. It runs initdb and
// pg_ctl from Debian's postgresql package, on a free port of 127.0.0.1, with password
// authentication over TCP, removed when the test binary ends. Run as root (CI), the
// server runs as the postgres user, since initdb refuses root.
package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Password is the superuser's password in every cluster pgtest starts.
const Password = "pgtest-Secret-4711"

// Cluster is a running throwaway server.
type Cluster struct {
	Port  int
	dir   string // holds data/ and the server log
	bin   string
	runAs *user.User // nil: run as the current user
}

var (
	sharedOnce sync.Once
	shared     *Cluster
	sharedErr  error
	dbSeq      atomic.Int64
)

// binDir finds PostgreSQL's server programs: /usr/lib/postgresql/<newest>/bin, or PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL server programs (initdb, pg_ctl) not found: apt-get install postgresql")
}

// missing skips the test, or fails it under CI=true, where nothing may skip.
func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("pgtest: %v", err)
	}
	t.Skipf("pgtest: %v", err)
}

// Shared returns the test binary's one cluster, started on first use (a TestMain
// calls [StopShared] at the end). It skips the test when PostgreSQL is not installed,
// and fails it under CI=true.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		missing(t, sharedErr)
	}
	return shared
}

// StopShared stops the shared cluster and removes its files (no-op if none started).
func StopShared() {
	if shared != nil {
		shared.Stop()
	}
}

// Start initialises and starts a new cluster.
func Start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, and no postgres user to run the server as: %v", err)
		}
		c.runAs = u
	}
	c.dir, err = os.MkdirTemp("", "perfgate-pgtest-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(c.dir, 0o755); err != nil {
		return nil, err
	}
	pw := filepath.Join(c.dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		return nil, err
	}
	if c.runAs != nil {
		uid, _ := strconv.Atoi(c.runAs.Uid)
		gid, _ := strconv.Atoi(c.runAs.Gid)
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "--pwfile", pw, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale"); err != nil {
		c.remove()
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	for attempt := 0; ; attempt++ {
		c.Port, err = freePort()
		if err != nil {
			return nil, err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100", c.Port, c.dir)
		out, err := c.run("pg_ctl", "-D", c.data(), "-o", opts, "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "start")
		if err == nil {
			break
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			c.remove()
			return nil, fmt.Errorf("pg_ctl start: %v: %s %s", err, out, log)
		}
	}
	return c, nil
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// run runs one of PostgreSQL's programs (as the postgres user when root).
func (c *Cluster) run(prog string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, prog), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSWORD=")
	cmd.Dir = c.dir
	if c.runAs != nil {
		uid, _ := strconv.Atoi(c.runAs.Uid)
		gid, _ := strconv.Atoi(c.runAs.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// NewDatabase creates an empty database and returns its URL (password included).
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("db%d_%d", os.Getpid(), dbSeq.Add(1))
	if out, err := c.run("createdb", "-h", c.dir, "-p", strconv.Itoa(c.Port), "-U", "postgres", name); err != nil {
		t.Fatalf("pgtest: createdb %s: %v: %s", name, err, out)
	}
	return c.URL(name, Password)
}

// URL returns the address of database name with the given password.
func (c *Cluster) URL(name, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", password), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)), Path: "/" + name, RawQuery: "sslmode=disable"}
	return u.String()
}

// Stop stops the server at once and removes its files.
func (c *Cluster) Stop() {
	_, _ = c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "-t", "30", "stop")
	c.remove()
}

func (c *Cluster) remove() {
	for range 5 {
		if os.RemoveAll(c.dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
