package loadgen

// User-centric timing (AIPerf's --user-centric-rate QPS --num-users N): each of N
// users sends its next turn on its own schedule, one gap of N/QPS after its previous
// send (or at once, when its answer came later than that), so the users together send
// QPS requests a second while each keeps the think time a real user of a chat keeps.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// UserCentricPacer is the schedule of user-centric timing: Users users share Rate
// requests per second, each sending its turns Gap() = Users/Rate apart. A user's
// next turn is due at max(its previous answer's end, its previous turn's due time +
// the gap), so a slow answer delays that user alone, and a user never sends two
// turns closer than the gap. The users start Stagger() = 1/Rate apart, in the order
// and with the first sessions [UserCentricPacer.Starts] gives (AIPerf's virtual
// history: at the start some users are near the end of a session, some mid-way,
// one just starting, as in a service that has been running for a while).
//
// With Poisson, a user's gaps are exponential of mean Gap() instead (drawn from a
// source seeded by Seed and the user's number) and its first send is one such gap
// after the start: each user's sends are then a Poisson process of Rate/Users and,
// while answers come within the gaps, all users' together one of Rate. The zero
// Poisson is AIPerf's fixed gap.
//
// The schedule is pure: a user's due times depend only on the pacer, the user's
// number and the ends of its answers, never on the wall clock.
type UserCentricPacer struct {
	Rate    float64 // requests per second over all users; > 0
	Users   int     // > 0
	Poisson bool
	Seed    uint64
}

// Gap is the time between one user's turns: Users/Rate.
func (p UserCentricPacer) Gap() time.Duration {
	return time.Duration(float64(p.Users) / p.Rate * 1e9)
}

// Stagger is the time between two users' first turns: 1/Rate.
func (p UserCentricPacer) Stagger() time.Duration { return time.Duration(1e9 / p.Rate) }

// String describes the pacer, e.g. "UserCentric{2 req/s, 15 users, gap 7.5s}".
func (p UserCentricPacer) String() string {
	kind := "UserCentric"
	if p.Poisson {
		kind = "UserCentricPoisson"
	}
	return fmt.Sprintf("%s{%g req/s, %d users, gap %v}", kind, p.Rate, p.Users, p.Gap())
}

// UserStart is one user's start: the offset of its first turn from the run's start,
// and how many turns of its first session it sends (0 = all of them).
type UserStart struct {
	Offset time.Duration
	Turns  int
}

// Starts returns the users' starts for sessions of about turns turns, AIPerf's
// virtual history: the session's lifetime is L = turns−1 gaps; user i (of N) is
// (N−i)·L/N gaps into its session, so it sends the L − ⌊(N−i)·L/N⌋ turns left of
// its first session; the user with none left is replaced by a user starting a whole
// session, first at offset 0; the others fire in the order of their ages (step
// (N−i)·L mod N, or i·s mod N for the smallest s > 1 coprime with N when L and N
// share a factor), one Stagger apart. Later sessions are whole. With turns <= 1
// every user starts whole, user i at i·Stagger. Under Poisson the offsets are each
// user's first exponential gap (see [UserSchedule.Next]) and only Turns is used.
func (p UserCentricPacer) Starts(turns int) []UserStart {
	n := p.Users
	out := make([]UserStart, n)
	if turns <= 1 {
		for i := range out {
			out[i].Offset = time.Duration(i) * p.Stagger()
		}
		return out
	}
	life := turns - 1
	step := 0
	if gcd(n, life) > 1 {
		step = 1
		for s := 2; s < n; s++ {
			if gcd(n, s) == 1 {
				step = s
				break
			}
		}
	}
	k := 0
	for i := 1; i < n; i++ { // user 0 is virtually done: replaced by a whole session
		age := (n - i) * life
		slot := age % n
		if step > 0 {
			slot = i * step % n
		}
		out[k] = UserStart{Offset: time.Duration(n-slot) * p.Stagger(), Turns: life - age/n}
		k++
	}
	out[k] = UserStart{} // the new user, first at 0 with every turn
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// User returns user i's schedule, its first turn due at start.Offset (under Poisson,
// at its first exponential gap).
func (p UserCentricPacer) User(i int, start UserStart) *UserSchedule {
	u := &UserSchedule{p: p, gap: p.Gap(), first: start.Offset}
	if p.Poisson {
		u.rng = rand.New(rand.NewPCG(p.Seed, 0x05e7+uint64(i)))
		u.first = u.draw()
	}
	return u
}

// UserSchedule is one user's due times (see [UserCentricPacer]). Not safe for
// concurrent use: a user sends one turn at a time.
type UserSchedule struct {
	p     UserCentricPacer
	gap   time.Duration
	first time.Duration
	last  time.Duration // the previous turn's due time
	sent  bool
	rng   *rand.Rand // Poisson's; nil = fixed gaps
}

// draw is the next gap: Gap(), or an exponential of that mean.
func (u *UserSchedule) draw() time.Duration {
	if u.rng == nil {
		return u.gap
	}
	return time.Duration(u.rng.ExpFloat64() * float64(u.gap))
}

// Next returns the due time of the user's next turn, asked at now (since the run's
// start; after the previous turn's answer): the first at its start, then
// max(now, previous due + gap).
func (u *UserSchedule) Next(now time.Duration) time.Duration {
	if !u.sent {
		u.sent, u.last = true, u.first
		return u.first
	}
	u.last = max(now, u.last+u.draw())
	return u.last
}

// userCentric returns the run's user-centric pacer; ok is false when the run has
// none.
func (c *Config) userCentric() (p UserCentricPacer, ok bool) {
	if c.UserCentricRate <= 0 {
		return p, false
	}
	return UserCentricPacer{Rate: c.UserCentricRate, Users: c.Concurrency, Poisson: c.Arrival == ArrivalPoisson, Seed: c.Seed}, true
}

// sessionTurns is the number of turns a session has on average (Workload.Turns'
// mean, rounded; 1 without one), the virtual history's session length.
func (c *Config) sessionTurns() int {
	if c.Turns.Distribution == nil {
		return 1
	}
	m, ok := c.Turns.Distribution.(interface{ Mean() float64 })
	if !ok || math.IsNaN(m.Mean()) {
		return 1
	}
	return max(1, int(math.Round(m.Mean())))
}

// users is user-centric timing's transport: one goroutine per user, each sending
// its sessions' turns from wl through send on its own schedule until the run ends.
type users struct {
	p     UserCentricPacer
	turns int // a session's, on average (Config.sessionTurns)
	wl    *workload
	send  sendPath
	clock *runClock
}

var _ driver = (*users)(nil)

func (d *users) drive(ctx context.Context) {
	var wg sync.WaitGroup
	for i, s := range d.p.Starts(d.turns) {
		wg.Go(func() { d.user(ctx, d.p.User(i, s), s.Turns) })
	}
	wg.Wait()
}

// user sends session after session for one user: each session's first turn when
// the schedule says, the first session cut to firstTurns turns (0 = whole).
func (d *users) user(ctx context.Context, u *UserSchedule, firstTurns int) {
	for {
		due := u.Next(d.clock.now())
		if !sleep(ctx, due-d.clock.now()) {
			return
		}
		idx, conv, ok := d.wl.take(ctx)
		if !ok {
			return
		}
		if firstTurns > 0 && firstTurns < len(conv.Turns) {
			conv.Turns = conv.Turns[:firstTurns]
		}
		firstTurns = 0
		if !d.send.conversationAs(ctx, conv, idx, due, false, nil, sessionOpts{user: u}) {
			return
		}
	}
}

// sessionOpts are a session's optional settings: the user whose schedule its turns
// follow (user-centric timing; nil = each turn after its delay), and where its last
// turn's answer goes (a sub-agent's, for its parent's joining turn; nil = nowhere).
type sessionOpts struct {
	user   *UserSchedule
	answer *string
}
