package loadgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

// fingerprinter hashes the request bodies of a run in send order (request index
// order, whatever order concurrent senders reach it in): the SHA-256 of each body,
// chained in index order into one SHA-256. Out-of-order digests wait in a ring until
// their turn, so memory holds only the requests in flight. A shard sends every
// stride-th request of the global schedule, starting at its index: those are the
// indices it waits for.
type fingerprinter struct {
	mu     sync.Mutex
	next   int // the index whose digest goes in next
	stride int
	// ring[(head+k) % len(ring)] holds the digest of index next+k·stride when
	// have[...] is set. It grows (doubling) to the furthest index ahead seen, which the
	// requests in flight bound; a map here cost an allocation per request.
	ring    [][sha256.Size]byte
	have    []bool
	head    int
	waiting int               // digests in the ring
	cur     [sha256.Size]byte // the digest being written (a parameter's would escape)
	h       interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	n    int
	salt []byte // replaced by saltPlaceholder before hashing
	// hashed counts the bodies digest hashed (the memos' misses), for the tests.
	hashed atomic.Int64
}

// saltPlaceholder stands for a run's cache-bust salt in the fingerprint, so runs that
// differ only by their salt fingerprint alike.
var saltPlaceholder = []byte("{salt}")

// newFingerprinter returns the fingerprinter of a run whose request indices are first,
// first+stride, first+2·stride, … (a shard's share of the global schedule; 0 and 1
// unsharded).
func newFingerprinter(salt string, first, stride int) *fingerprinter {
	f := &fingerprinter{next: first, stride: max(stride, 1), h: sha256.New()}
	if salt != "" {
		f.salt = []byte(salt)
	}
	return f
}

// digest is the SHA-256 of body with the salt replaced by its placeholder.
func (f *fingerprinter) digest(body []byte) [sha256.Size]byte {
	if f.salt != nil && bytes.Contains(body, f.salt) {
		body = bytes.ReplaceAll(body, f.salt, saltPlaceholder)
	}
	f.hashed.Add(1)
	return sha256.Sum256(body)
}

// add takes request idx's body.
func (f *fingerprinter) add(idx int, body []byte) { f.addDigest(idx, f.digest(body)) }

// addDigest takes request idx's body digest (see digest).
func (f *fingerprinter) addDigest(idx int, d [sha256.Size]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	k := (idx - f.next) / f.stride
	if k < 0 || (idx-f.next)%f.stride != 0 {
		return // not one of this run's indices (cannot happen): keep the chain as it is
	}
	if k > 0 {
		if k >= len(f.ring) {
			f.grow(k + 1)
		}
		i := (f.head + k) % len(f.ring)
		f.ring[i], f.have[i] = d, true
		f.waiting++
		return
	}
	f.cur = d
	f.h.Write(f.cur[:])
	f.advance()
	for f.waiting > 0 && f.have[f.head] {
		f.h.Write(f.ring[f.head][:])
		f.have[f.head] = false
		f.waiting--
		f.advance()
	}
}

// advance moves past the index next.
func (f *fingerprinter) advance() {
	f.next += f.stride
	if len(f.ring) > 0 {
		f.head = (f.head + 1) % len(f.ring)
	}
}

// grow makes the ring hold at least n digests, keeping their order from head.
func (f *fingerprinter) grow(n int) {
	size := max(64, len(f.ring))
	for size < n {
		size *= 2
	}
	ring, have := make([][sha256.Size]byte, size), make([]bool, size)
	for k := range len(f.ring) {
		i := (f.head + k) % len(f.ring)
		ring[k], have[k] = f.ring[i], f.have[i]
	}
	f.ring, f.have, f.head = ring, have, 0
}

// sum returns the fingerprint and the number of bodies in it; digests still waiting
// for a request that was never sent (a cancelled run) go in, in index order.
func (f *fingerprinter) sum() (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range len(f.ring) {
		if i := (f.head + k) % len(f.ring); f.have[i] {
			f.h.Write(f.ring[i][:])
			f.have[i] = false
		}
	}
	f.waiting = 0
	return hex.EncodeToString(f.h.Sum(nil)), f.n
}

// bodyDigest is r.fp's digest of body, the body sent for turn t. When body is the chat
// body kept in t's memo (bodyBuilder.json), its digest is kept there too: a synthetic
// prompt's corpus window is drawn many times, and hashing its body each time was a
// visible part of the client's CPU per request. Other bodies go through sc's
// last-body memo.
func (f *fingerprinter) bodyDigest(t *dataset.Turn, sc *scratch, body []byte) [sha256.Size]byte {
	if t.Memo == nil {
		return sc.digest(f, body)
	}
	m := loadMemo(t)
	if m == nil || !sameSlice(m.body, body) {
		return sc.digest(f, body)
	}
	if m.hasDigest && m.fp == f {
		return m.digest
	}
	d := f.digest(body)
	nm := nextMemo(t, m)
	nm.fp, nm.digest, nm.hasDigest = f, d, true
	t.Memo.Store(nm)
	return d
}

// sameSlice reports whether a and b are the same bytes in memory (not merely equal):
// a memoised body is never written to, so the same slice is the same body.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}
