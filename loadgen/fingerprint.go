package loadgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"sync"
)

// fingerprinter hashes the request bodies of a run in send order (request index
// order, whatever order concurrent senders reach it in): the SHA-256 of each body,
// chained in index order into one SHA-256. Out-of-order digests wait in a map until
// their turn, so memory holds only the requests in flight. A shard sends every
// stride-th request of the global schedule, starting at its index: those are the
// indices it waits for.
type fingerprinter struct {
	mu      sync.Mutex
	next    int
	stride  int
	pending map[int][sha256.Size]byte
	h       interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	n    int
	salt []byte // replaced by saltPlaceholder before hashing
}

// saltPlaceholder stands for a run's cache-bust salt in the fingerprint, so runs that
// differ only by their salt fingerprint alike.
var saltPlaceholder = []byte("{salt}")

// newFingerprinter returns the fingerprinter of a run whose request indices are first,
// first+stride, first+2·stride, … (a shard's share of the global schedule; 0 and 1
// unsharded).
func newFingerprinter(salt string, first, stride int) *fingerprinter {
	f := &fingerprinter{next: first, stride: max(stride, 1), pending: map[int][sha256.Size]byte{}, h: sha256.New()}
	if salt != "" {
		f.salt = []byte(salt)
	}
	return f
}

// add takes request idx's body.
func (f *fingerprinter) add(idx int, body []byte) {
	if f.salt != nil && bytes.Contains(body, f.salt) {
		body = bytes.ReplaceAll(body, f.salt, saltPlaceholder)
	}
	d := sha256.Sum256(body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if idx != f.next {
		f.pending[idx] = d
		return
	}
	f.h.Write(d[:])
	f.next += f.stride
	for {
		p, ok := f.pending[f.next]
		if !ok {
			return
		}
		delete(f.pending, f.next)
		f.h.Write(p[:])
		f.next += f.stride
	}
}

// sum returns the fingerprint and the number of bodies in it; digests still waiting
// for a request that was never sent (a cancelled run) go in, in index order.
func (f *fingerprinter) sum() (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, i := range slices.Sorted(maps.Keys(f.pending)) {
		p := f.pending[i]
		f.h.Write(p[:])
	}
	clear(f.pending)
	return hex.EncodeToString(f.h.Sum(nil)), f.n
}
