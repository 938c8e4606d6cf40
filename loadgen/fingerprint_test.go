package loadgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// TestFingerprintSeeded: equal seeded workloads fingerprint alike whatever order the
// concurrent senders finish in; another seed, or another length, does not.
func TestFingerprintSeeded(t *testing.T) {
	run := func(seed uint64, conc int, latency time.Duration) *Outcome {
		out, _ := runFake(t, Config{Target: Target{NoStream: true}, Workload: Workload{Seed: seed}, Load: Load{Concurrency: conc}, Stop: Stop{Requests: 60, WarmupRequests: 4}}, latency)
		if out.Fingerprinted != 64 || len(out.Fingerprint) != 64 {
			t.Fatalf("fingerprint %q over %d bodies, want 64 hex digits over 64", out.Fingerprint, out.Fingerprinted)
		}
		return out
	}
	a, b := run(1, 1, time.Millisecond), run(1, 8, 3*time.Millisecond)
	if a.Fingerprint != b.Fingerprint {
		t.Errorf("same seed, one vs eight in flight: %s != %s", a.Fingerprint, b.Fingerprint)
	}
	if c := run(2, 1, time.Millisecond); c.Fingerprint == a.Fingerprint {
		t.Errorf("seeds 1 and 2 fingerprint alike: %s", c.Fingerprint)
	}
}

func TestFingerprinterOrderAndSalt(t *testing.T) {
	bodies := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	want := sha256.New()
	for _, b := range bodies {
		d := sha256.Sum256(b)
		want.Write(d[:])
	}
	f := newFingerprinter("", 0, 1)
	for _, i := range []int{2, 0, 1} {
		f.add(i, bodies[i])
	}
	if got, n := f.sum(); got != hex.EncodeToString(want.Sum(nil)) || n != 3 {
		t.Errorf("out of order: %s (%d), want the in-order chain", got, n)
	}
	// Far out of order (the ring grows past its first size, with a wrapped head) and
	// a cancelled run's gaps: the chain is in index order over what was added.
	var all [][]byte
	for i := range 300 {
		all = append(all, []byte{byte(i), byte(i >> 8), 7})
	}
	order := []int{5, 1, 0} // 0 and 1 go in; 5 waits
	for i := 299; i >= 2; i-- {
		if i != 5 && i != 150 { // 150 is never sent
			order = append(order, i)
		}
	}
	g := newFingerprinter("", 0, 1)
	wantAll := sha256.New()
	for i, b := range all {
		if i != 150 {
			d := sha256.Sum256(b)
			wantAll.Write(d[:])
		}
	}
	for _, i := range order {
		g.add(i, all[i])
	}
	if g.waiting != 299-150 {
		t.Errorf("%d digests wait behind the missing 150, want %d", g.waiting, 299-150)
	}
	if got, n := g.sum(); got != hex.EncodeToString(wantAll.Sum(nil)) || n != 299 {
		t.Errorf("far out of order with a gap: %s (%d), want the in-order chain over 299", got, n)
	}
	// A salt is replaced by its placeholder: two runs that differ only by salt agree.
	x, y := newFingerprinter("01ab", 0, 1), newFingerprinter("02cd", 0, 1)
	x.add(0, []byte(`{"prompt":"[0 01ab]\nhello"}`))
	y.add(0, []byte(`{"prompt":"[0 02cd]\nhello"}`))
	if sx, _ := x.sum(); func() bool { sy, _ := y.sum(); return sx != sy }() {
		t.Error("salted bodies fingerprint differently")
	}
}

// TestPromptSaltCounted: the salt starts the first prompt and is counted in ISL, and
// the prompt stays exact.
func TestPromptSaltCounted(t *testing.T) {
	out, _ := runFake(t, Config{Target: Target{NoStream: true}, Workload: Workload{Seed: 3, PromptSalt: "0123456789abcdef"}, Stop: Stop{Requests: 10}}, time.Millisecond)
	plain, _ := runFake(t, Config{Target: Target{NoStream: true}, Workload: Workload{Seed: 3}, Stop: Stop{Requests: 10}}, time.Millisecond)
	saltTok := gpt2(t).Count(saltLine(0, "0123456789abcdef", false), false)
	for i, rec := range out.Records {
		if !rec.ISLExact || rec.ISL != plain.Records[i].ISL+saltTok && rec.ISL != plain.Records[i].ISL+saltTok-1 {
			t.Errorf("record %d: ISL %d (exact %v), unsalted %d, salt %d tokens", i, rec.ISL, rec.ISLExact, plain.Records[i].ISL, saltTok)
		}
	}
	if out.Fingerprint == plain.Fingerprint {
		t.Error("a salted run fingerprints as the unsalted one: the placeholder is lost")
	}
}

// TestFingerprinterSharded: a shard's indices step by the shard count, and each digest
// goes into the chain as soon as its turn comes, so nothing waits beyond the requests
// in flight (with a stride of 1 every digest here would wait for the whole run).
func TestFingerprinterSharded(t *testing.T) {
	f := newFingerprinter("", 2, 4) // shard 2 of 4: requests 2, 6, 10, …
	want := sha256.New()
	for k := range 1000 {
		body := []byte{byte(k), byte(k >> 8)}
		f.add(2+4*k, body)
		d := sha256.Sum256(body)
		want.Write(d[:])
		if f.waiting != 0 {
			t.Fatalf("after request %d in order, %d digests wait", 2+4*k, f.waiting)
		}
	}
	if got, n := f.sum(); got != hex.EncodeToString(want.Sum(nil)) || n != 1000 {
		t.Errorf("sharded: %s (%d), want the in-order chain over 1000", got, n)
	}
}

// bodySender answers every request at once and keeps each body sent, by index.
type bodySender struct {
	clock  *runClock
	mu     sync.Mutex
	bodies map[int][]byte
}

func (s *bodySender) send(_ context.Context, c *call, rec *record.Client, res *result) {
	s.mu.Lock()
	s.bodies[rec.Index] = bytes.Clone(c.body)
	s.mu.Unlock()
	rec.Sent = s.clock.now()
	rec.Done, rec.Status = rec.Sent, 200
	res.text = append(res.text, " hello"...)
	res.ends = append(res.ends, len(res.text))
	rec.Chunks = append(rec.Chunks, record.Chunk{T: rec.Done, Choices: true})
}

// TestFingerprintMemoisedBodies: a synthetic run whose corpus windows repeat (their
// bodies and digests kept in the turns' memos) fingerprints exactly as the definition
// says: the SHA-256 over the SHA-256 of every body sent, in index order.
func TestFingerprintMemoisedBodies(t *testing.T) {
	for _, conc := range []int{1, 4} {
		cfg := Config{Target: Target{URLs: []string{"http://127.0.0.1:9"}, NoStream: true, Model: "m"},
			Workload: Workload{ISL: fixed(4), Seed: 5}, Load: Load{Concurrency: conc}, Stop: Stop{Requests: 4000}}
		r, err := newRunner(context.Background(), cfg, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &bodySender{clock: r.clock, bodies: map[int][]byte{}}
		r.sender = s
		out, err := r.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		h, distinct := sha256.New(), map[string]bool{}
		for i := range 4000 {
			b, ok := s.bodies[i]
			if !ok {
				t.Fatalf("request %d was not sent", i)
			}
			d := sha256.Sum256(b)
			h.Write(d[:])
			distinct[string(b)] = true
		}
		if len(distinct) > 3600 {
			t.Fatalf("%d distinct bodies in 4000: too few repeat to use the memo", len(distinct))
		}
		if want := hex.EncodeToString(h.Sum(nil)); out.Fingerprint != want || out.Fingerprinted != 4000 {
			t.Errorf("concurrency %d: fingerprint %s over %d; want %s over 4000", conc, out.Fingerprint, out.Fingerprinted, want)
		}
		// Each distinct body is hashed about once (a window whose memo went to
		// another body is hashed again), not once per request.
		if n := int(r.fp.hashed.Load()); n > len(distinct)+(4000-len(distinct))/4 {
			t.Errorf("concurrency %d: %d bodies hashed for %d distinct in 4000 requests: the memoised digests were not used", conc, n, len(distinct))
		}
	}
}

// TestBodyDigestMemo: the digest of a turn's memoised chat body is kept with it, for
// that run's fingerprinter only, and dropped when the body is replaced; a body that is
// not the memo's (equal bytes elsewhere, or another body) is hashed.
func TestBodyDigestMemo(t *testing.T) {
	cfg := Config{Target: Target{URLs: []string{"http://127.0.0.1:9"}, NoStream: true, Model: "m"}, Stop: Stop{Requests: 1}}
	r, err := newRunner(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn := &dataset.Turn{Prompt: "hello there", ISL: 2, OSL: 5, Memo: &dataset.Memo{}}
	tc, sc := &turnCtx{}, &scratch{}
	body, _ := r.bodies.build(r.api, turn, tc, false)
	if again, _ := r.bodies.build(r.api, turn, tc, false); !sameSlice(body, again) {
		t.Fatal("the chat body was not memoised: nothing to test")
	}
	want := sha256.Sum256(body)
	if d := r.fp.bodyDigest(turn, sc, body); d != want {
		t.Fatalf("digest %x; want %x", d, want)
	}
	m := loadMemo(turn)
	if !m.hasDigest || m.digest != want || m.fp != r.fp || !sameSlice(m.body, body) {
		t.Fatalf("the digest was not kept with the body: %+v", m)
	}
	// A kept digest is what comes back (a wrong one planted there shows it is used).
	planted := nextMemo(turn, m)
	planted.digest[0] ^= 0xff
	turn.Memo.Store(planted)
	if d := r.fp.bodyDigest(turn, sc, body); d != planted.digest {
		t.Error("the kept digest was not used")
	}
	// Equal bytes that are not the memo's body, and another run's fingerprinter: hashed.
	if d := r.fp.bodyDigest(turn, sc, bytes.Clone(body)); d != want {
		t.Errorf("a copy of the body: digest %x; want %x", d, want)
	}
	fp := r.fp
	r.fp = newFingerprinter("", 0, 1)
	if d := r.fp.bodyDigest(turn, sc, body); d != want {
		t.Errorf("another run: digest %x; want %x", d, want)
	}
	r.fp = fp
	// A new body (another output cap) drops the digest.
	turn.OSL = 6
	body2, _ := r.bodies.build(r.api, turn, tc, false)
	if m := loadMemo(turn); m.hasDigest || !sameSlice(m.body, body2) {
		t.Errorf("the old body's digest survived its replacement: %+v", m)
	}
	if d := r.fp.bodyDigest(turn, sc, body2); d != sha256.Sum256(body2) {
		t.Error("the new body's digest is wrong")
	}
}
