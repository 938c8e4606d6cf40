package coordinator

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBarrier: three shards registering at once get one T0, all registered, and each
// measures the offset of a coordinator whose clock is 5 s ahead to within half its
// best round trip.
func TestBarrier(t *testing.T) {
	srv := NewServer(3, 50*time.Millisecond, time.Minute)
	srv.now = func() time.Time { return time.Now().Add(5 * time.Second) }
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make([]Synced, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			s, err := Sync(ctx, ts.URL, i, 3)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	for i, s := range got {
		if !s.StartAt.Equal(got[0].StartAt) || !slices.Equal(s.Registered, []int{0, 1, 2}) || s.Missing != nil || s.Late {
			t.Errorf("shard %d: %+v; want shard 0's T0 %v, all registered", i, s.Registration, got[0].StartAt)
		}
		if err := s.Offset - 5*time.Second; err.Abs() > s.RTT/2+time.Millisecond {
			t.Errorf("shard %d: offset %v, want 5s ± RTT/2 (RTT %v)", i, s.Offset, s.RTT)
		}
		if d := s.StartAt.Sub(s.Local); (d - s.Offset).Abs() > 0 {
			t.Errorf("shard %d: local T0 %v is not T0 %v minus the offset %v", i, s.Local, s.StartAt, s.Offset)
		}
	}
}

// TestBarrierTimeout: with one of three shards absent the barrier releases the two
// at its timeout, naming the missing one; the third, registering after, gets the
// same T0 marked late.
func TestBarrierTimeout(t *testing.T) {
	srv := NewServer(3, time.Millisecond, 100*time.Millisecond)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	got := make([]Synced, 2)
	for i := range 2 {
		wg.Go(func() {
			s, err := Sync(ctx, ts.URL, i, 3)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	if !slices.Equal(got[0].Missing, []int{2}) || got[0].Late {
		t.Errorf("after the timeout: %+v; want shard 2 missing", got[0].Registration)
	}
	late, err := Sync(ctx, ts.URL, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !late.Late || !late.StartAt.Equal(got[0].StartAt) {
		t.Errorf("late shard: %+v; want Late and T0 %v", late.Registration, got[0].StartAt)
	}
	if _, err := Sync(ctx, ts.URL, 0, 4); err == nil {
		t.Error("a shard of a 4-shard run registered with a 3-shard barrier")
	}
}
