//go:build linux

package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// evbare is a minimal epoll event loop client, the peer that tells how much of wrk's
// advantage over the bare fasthttp loop a Go event loop gets: GOMAXPROCS loops, each on
// a locked OS thread owning c/loops non-blocking sockets, writing a fixed request and
// reading the answer's head for its Content-Length, with no goroutine per connection.
func evbare(args []string) error {
	fs := flag.NewFlagSet("evbare", flag.ExitOnError)
	u := fs.String("url", "", "endpoint URL (http://127.0.0.1:PORT/...)")
	c := fs.Int("c", 64, "connections")
	d := fs.Duration("d", 5*time.Second, "duration")
	loops := fs.Int("loops", runtime.GOMAXPROCS(0), "event loops (one locked thread each)")
	prof := fs.String("cpuprofile", "", "write a CPU profile")
	_ = fs.Parse(args)
	stop, err := cpuProfile(*prof)
	if err != nil {
		return err
	}
	defer stop()
	pu, err := url.Parse(*u)
	if err != nil {
		return err
	}
	host, port := pu.Hostname(), pu.Port()
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	ip := parseIP4(host)
	body := `{"model":"m","messages":[{"role":"user","content":"hello"}]}`
	req := []byte("POST " + pu.RequestURI() + " HTTP/1.1\r\nHost: " + pu.Host + "\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	var n atomic.Int64
	deadline := time.Now().Add(*d)
	var wg sync.WaitGroup
	errs := make(chan error, *loops)
	start, cpu0 := time.Now(), cpuNow()
	for i := range *loops {
		k := *c / *loops
		if i < *c%*loops {
			k++
		}
		wg.Go(func() {
			if err := evLoop(ip, p, k, req, deadline, &n); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("evbare %.0f cpu_us_per_req=%.2f\n", float64(n.Load())/time.Since(start).Seconds(), float64((cpuNow()-cpu0).Nanoseconds())/1e3/float64(max(n.Load(), 1)))
	return nil
}

func parseIP4(h string) [4]byte {
	var ip [4]byte
	var i, v int
	for _, ch := range h + "." {
		if ch == '.' {
			if i < 4 {
				ip[i] = byte(v)
			}
			i, v = i+1, 0
			continue
		}
		v = v*10 + int(ch-'0')
	}
	return ip
}

type evConn struct {
	fd  int
	buf []byte
	n   int // bytes in buf
}

func evLoop(ip [4]byte, port, k int, req []byte, deadline time.Time, count *atomic.Int64) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer syscall.Close(ep)
	conns := make([]*evConn, k)
	for i := range conns {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: ip}); err != nil {
			return err
		}
		_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		_ = syscall.SetNonblock(fd, true)
		conns[i] = &evConn{fd: fd, buf: make([]byte, 4096)}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
		if _, err := syscall.Write(fd, req); err != nil {
			return err
		}
	}
	defer func() {
		for _, c := range conns {
			syscall.Close(c.fd)
		}
	}()
	events := make([]syscall.EpollEvent, k)
	var done int64
	for {
		// Non-blocking first (no scheduler involvement); block (as a system call the
		// runtime sees, so GC is not held up) only when nothing is ready, with a bound.
		r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
		if e == 0 && r == 0 {
			if time.Now().After(deadline) {
				break
			}
			r, _, e = syscall.Syscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 100, 0, 0)
		}
		if e != 0 {
			if e == syscall.EINTR {
				continue
			}
			return e
		}
		for _, ev := range events[:r] {
			c := conns[ev.Fd]
			m, err := syscall.Read(c.fd, c.buf[c.n:])
			if err == syscall.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				return fmt.Errorf("read: %v (%d)", err, m)
			}
			c.n += m
			total, ok := evAnswerLen(c.buf[:c.n])
			if !ok || c.n < total {
				continue
			}
			if c.n > total {
				return fmt.Errorf("pipelined bytes")
			}
			c.n = 0
			done++
			if done&63 == 0 && time.Now().After(deadline) {
				count.Add(done)
				return nil
			}
			if _, err := syscall.Write(c.fd, req); err != nil {
				return err
			}
		}
	}
	count.Add(done)
	return nil
}

// evAnswerLen returns the length of the whole answer (head and body) when its head is
// complete in b.
func evAnswerLen(b []byte) (int, bool) {
	h := bytes.Index(b, []byte("\r\n\r\n"))
	if h < 0 {
		return 0, false
	}
	i := bytes.Index(b[:h], []byte("\nContent-Length:"))
	if i < 0 {
		return 0, false
	}
	v := bytes.TrimLeft(b[i+len("\nContent-Length:"):h], " ")
	n := 0
	for _, d := range v {
		if d < '0' || d > '9' {
			break
		}
		n = n*10 + int(d-'0')
	}
	return h + 4 + n, true
}
