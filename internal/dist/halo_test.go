package dist_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/dist/disttest"
	"github.com/goop2/op2/internal/mpi"
)

// ringMesh is a ring of n nodes and n edges, edge e joining nodes e and
// e+1, with each node's owner scattered over the ranks (so that every
// rank has several neighbours and halo elements of both kinds) and each
// edge owned by its first node's owner.
func ringMesh(n, ranks int) (*dist.Mesh, [][]int32) {
	m := &dist.Mesh{
		Sets: []dist.Set{{Name: "nodes", Size: n}, {Name: "edges", Size: n}},
		Maps: []dist.Map{{Name: "pedge", From: 1, To: 0, Arity: 2, Table: make([]int32, 2*n)}},
	}
	owner := [][]int32{make([]int32, n), make([]int32, n)}
	for e := range n {
		m.Maps[0].Table[2*e], m.Maps[0].Table[2*e+1] = int32(e), int32((e+1)%n)
		owner[0][e] = int32((e / 3 * 7) % ranks) // runs of 3 nodes, scattered
	}
	for e := range n {
		owner[1][e] = owner[0][e]
	}
	return m, owner
}

// rankMesh is one simulated rank's part of ringMesh, as op2.Partition
// leaves it in core's types.
type rankMesh struct {
	nodes, edges *core.Set
	pedge        *core.Map
	job          *dist.Job
	p            *disttest.Proc
}

func newRankMesh(p *disttest.Proc, m *dist.Mesh, l *dist.Local) *rankMesh {
	set := func(i int) *core.Set {
		ls := &l.Sets[i]
		return &core.Set{Name: m.Sets[i].Name, Core: ls.Core, Owned: ls.Owned, Exec: ls.Exec, Total: ls.Total,
			ID: core.NewID(), Halo: dist.NewSetHalo(ls, m.Sets[i].Size)}
	}
	rm := &rankMesh{nodes: set(0), edges: set(1), job: dist.NewJob(p), p: p}
	rm.pedge = &core.Map{Name: "pedge", From: rm.edges, To: rm.nodes, Arity: 2, Table: l.Maps[0], ID: core.NewID()}
	rm.job.SetPartitioned()
	return rm
}

// value is the value of component c of global element g of the dat named
// name, at version v.
func value(name string, g int64, c, v int) float64 {
	return float64(len(name))*1000 + float64(g)*10 + float64(c) + float64(v)*0.5
}

// haloSentinel fills the halo elements until an exchange reaches them.
const haloSentinel = -1

// newDat is a float64 Dat of dim components on s: its owned elements hold
// value(name, global, c, 0), its halo elements haloSentinel.
func newDat(s *core.Set, name string, dim int) *core.Storage {
	vals := make([]float64, s.Total*dim)
	h := s.Halo.(*dist.SetHalo)
	for i := range s.Total {
		for c := range dim {
			vals[i*dim+c] = haloSentinel
			if i < s.Owned {
				vals[i*dim+c] = value(name, h.Global[i], c, 0)
			}
		}
	}
	return &core.Storage{Name: name, Type: core.Float64, Dim: dim, Set: s, Host: unsafe.Pointer(&vals[0]), Len: len(vals), ID: core.NewID()}
}

func newGlobal(name string, vals ...float64) *core.Storage {
	v := append([]float64(nil), vals...)
	return &core.Storage{Name: name, Type: core.Float64, Dim: len(v), Host: unsafe.Pointer(&v[0]), Len: len(v), ID: core.NewID()}
}

func values(s *core.Storage) []float64 { return unsafe.Slice((*float64)(s.Host), s.Len) }

// checkHalo checks that every halo element of s holds the owner's value
// at version v, or haloSentinel when fresh is false (not exchanged).
func checkHalo(s *core.Storage, v int, fresh bool) error {
	h := s.Set.Halo.(*dist.SetHalo)
	vals := values(s)
	for i := s.Set.Owned; i < s.Set.Total; i++ {
		for c := range s.Dim {
			want := float64(haloSentinel)
			if fresh {
				want = value(s.Name, h.Global[i], c, v)
			}
			if got := vals[i*s.Dim+c]; got != want {
				return fmt.Errorf("dat %q: halo element %d (global %d) component %d: %g, want %g", s.Name, i, h.Global[i], c, got, want)
			}
		}
	}
	return nil
}

// setVersion gives the owned elements of s the values of version v.
func setVersion(s *core.Storage, v int) {
	h := s.Set.Halo.(*dist.SetHalo)
	vals := values(s)
	for i := range s.Set.Owned {
		for c := range s.Dim {
			vals[i*s.Dim+c] = value(s.Name, h.Global[i], c, v)
		}
	}
}

func newLoop(kernel string, set *core.Set, args ...core.Arg) *core.Loop {
	l := &core.Loop{Kernel: &core.Kernel{Name: kernel, ID: core.NewID()}, Set: set, Args: args}
	l.Sig = core.Analyse(l)
	return l
}

func viaMap(s *core.Storage, m *core.Map, idx int, acc core.Access) core.Arg {
	return core.Arg{Data: s, Map: m, Idx: idx, Access: acc, Kind: core.ArgIndirect}
}

func direct(s *core.Storage, acc core.Access) core.Arg {
	return core.Arg{Data: s, Access: acc, Kind: core.ArgDirect}
}

// run runs l's halo steps as the executor does for a loop on the host,
// with body in place of the launches.
func run(h *dist.Halo, l *core.Loop, body func()) error { return runOn(h, l, false, body) }

// runOn is run for a loop on a device (device) or on the host.
func runOn(h *dist.Halo, l *core.Loop, device bool, body func()) error {
	if err := h.Agree(l, nil); err != nil {
		return err
	}
	if err := h.Begin(l, device); err != nil {
		return err
	}
	if err := h.Wait(l); err != nil {
		return err
	}
	if body != nil {
		body()
	}
	return h.End(l)
}

// onRanks lays ringMesh out over ranks simulated ranks and runs f on each
// with its part, failing the test with every rank's error.
func onRanks(t *testing.T, ranks int, timeout time.Duration, f func(rm *rankMesh) error) []error {
	t.Helper()
	m, owner := ringMesh(24, ranks)
	locals, err := dist.Layout(m, owner, ranks)
	if err != nil {
		t.Fatal(err)
	}
	w := disttest.New(ranks, timeout)
	return w.Run(func(p *disttest.Proc) error {
		return f(newRankMesh(p, m, &locals[p.Rank()]))
	})
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestHaloExchangesStaleDats runs one sequence of loops on every rank and
// checks after each which Dats were exchanged (exactly the stale ones the
// loop reads through a map, or directly while it computes the exec halo,
// and those a rank changed on the host) and that their halo values are
// the owners'.
func TestHaloExchangesStaleDats(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d-ranks", ranks), func(t *testing.T) {
			noErrors(t, onRanks(t, ranks, 0, func(rm *rankMesh) error {
				h := rm.job.Exchange()
				q := newDat(rm.nodes, "q", 2)
				p := newDat(rm.nodes, "p", 1)
				s := newDat(rm.edges, "s", 1)
				q.HaloStale = true // declared with values: the halo gets them at the first exchange
				steps := []struct {
					name      string
					before    func()
					loop      *core.Loop
					exchanges int
					check     func() error
				}{
					{
						name:      "q stale, read through the map",
						loop:      newLoop("readq", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write)),
						exchanges: 1,
						check:     func() error { return errors.Join(checkHalo(q, 0, true), checkHalo(p, 0, false)) },
					},
					{
						name:      "q and p current: nothing to exchange",
						loop:      newLoop("readqp", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(p, rm.pedge, 1, core.Read), direct(s, core.Write)),
						exchanges: 0,
						check:     func() error { return checkHalo(p, 0, false) },
					},
					{
						name: "p changed on the host of rank 1 only",
						before: func() {
							if rm.p.Rank() == 1 {
								setVersion(p, 1)
								dist.HostWrite(p)
							} else {
								// The other ranks' values are version 1 too
								// for the check; only rank 1 says so.
								setVersion(p, 1)
							}
						},
						loop:      newLoop("readqp", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(p, rm.pedge, 1, core.Read), direct(s, core.Write)),
						exchanges: 1,
						check:     func() error { return checkHalo(p, 1, true) },
					},
					{
						// s, written by the loops before, is read
						// directly while the loop computes the exec
						// halo of edges: it is exchanged; q, only
						// incremented, is not.
						name:      "q incremented through the map, s read directly",
						loop:      newLoop("incq", rm.edges, viaMap(q, rm.pedge, 0, core.Inc), direct(s, core.Read)),
						exchanges: 1,
						check: func() error {
							if !q.HaloStale || s.HaloStale {
								return fmt.Errorf("after incq: q.HaloStale %v, s.HaloStale %v; want true, false", q.HaloStale, s.HaloStale)
							}
							setVersion(q, 2) // what the increments made of q's owned values
							return checkHalo(s, 0, true)
						},
					},
					{
						name:      "q read directly while the loop computes the exec halo",
						loop:      newLoop("rwp", rm.nodes, direct(q, core.Read), direct(p, core.RW)),
						exchanges: 0, // direct reads in a loop without indirect writes: owned values only
					},
					{
						name:      "q read through the map again",
						loop:      newLoop("readq", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write)),
						exchanges: 1,
						check:     func() error { return checkHalo(q, 2, true) },
					},
				}
				for _, st := range steps {
					if st.before != nil {
						st.before()
					}
					before := h.Exchanges()
					if err := run(h, st.loop, nil); err != nil {
						return fmt.Errorf("%s: %w", st.name, err)
					}
					if got := h.Exchanges() - before; got != st.exchanges {
						return fmt.Errorf("%s: %d Dats exchanged, want %d", st.name, got, st.exchanges)
					}
					if st.check != nil {
						if err := st.check(); err != nil {
							return fmt.Errorf("%s: %w", st.name, err)
						}
					}
				}
				return nil
			}))
		})
	}
}

// TestHaloValuesFollowLayout exchanges Dats of several dims on layouts of
// 2 to 4 ranks and checks every halo element against the owner's value,
// by global number.
func TestHaloValuesFollowLayout(t *testing.T) {
	for ranks := 2; ranks <= 4; ranks++ {
		t.Run(fmt.Sprintf("%d-ranks", ranks), func(t *testing.T) {
			noErrors(t, onRanks(t, ranks, 0, func(rm *rankMesh) error {
				h := rm.job.Exchange()
				a, b := newDat(rm.nodes, "a", 1), newDat(rm.nodes, "bb", 3)
				e := newDat(rm.edges, "e", 2)
				a.HaloStale, b.HaloStale, e.HaloStale = true, true, true
				// a loop that increments through the map computes the
				// exec halo of edges, so e's exec halo is read too.
				inc := newDat(rm.nodes, "inc", 1)
				l := newLoop("mix", rm.edges, viaMap(a, rm.pedge, 0, core.Read), viaMap(b, rm.pedge, 1, core.Read), direct(e, core.Read), viaMap(inc, rm.pedge, 0, core.Inc))
				if err := run(h, l, nil); err != nil {
					return err
				}
				if got := h.Exchanges(); got != 3 {
					return fmt.Errorf("%d Dats exchanged, want 3 (a, bb, e)", got)
				}
				if len(rm.nodes.Halo.(*dist.SetHalo).Neighbours) == 0 {
					return errors.New("no neighbours: the mesh does not test the exchange")
				}
				return errors.Join(checkHalo(a, 0, true), checkHalo(b, 0, true), checkHalo(e, 0, true), checkHalo(inc, 0, false))
			}))
		})
	}
}

// TestHaloRanksAtDifferentLoops checks that ranks that reached different
// loops all fail, each naming every rank's loop.
func TestHaloRanksAtDifferentLoops(t *testing.T) {
	errs := onRanks(t, 3, 0, func(rm *rankMesh) error {
		q := newDat(rm.nodes, "q", 1)
		s := newDat(rm.edges, "s", 1)
		kernel := "a"
		if rm.p.Rank() == 1 {
			kernel = "b"
		}
		// q's halo is current: the ranks meet in the agreement.
		return run(rm.job.Exchange(), newLoop(kernel, rm.edges, viaMap(q, rm.pedge, 0, core.Read), direct(s, core.Write)), nil)
	})
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error", r)
			continue
		}
		kernel := "a"
		if r == 1 {
			kernel = "b"
		}
		for _, want := range []string{
			fmt.Sprintf(`loop %q over set "edges" (rank %d of 3): the ranks are at different loops; every rank must run the same loops in the same order`, kernel, r),
			`rank 0: loop "a" over set "edges" with 2 arguments`,
			`rank 1: loop "b" over set "edges" with 2 arguments`,
			`rank 2: loop "a" over set "edges" with 2 arguments`,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("rank %d: error %q does not say %q", r, err, want)
			}
		}
	}
}

// TestHaloLoopMeetsAgreeStep: ranks at a loop's agreement and a rank at
// another collective operation (AgreeStep) meet in MPI calls of one kind
// and size, and every rank names where each is.
func TestHaloLoopMeetsAgreeStep(t *testing.T) {
	errs := onRanks(t, 3, 0, func(rm *rankMesh) error {
		q := newDat(rm.nodes, "q", 1)
		s := newDat(rm.edges, "s", 1)
		if rm.p.Rank() == 1 {
			return dist.AgreeStep(rm.p, "Gather of dat \"q\"", nil)
		}
		return run(rm.job.Exchange(), newLoop("a", rm.edges, viaMap(q, rm.pedge, 0, core.Read), direct(s, core.Write)), nil)
	})
	for r, err := range errs {
		for _, want := range []string{
			"the ranks are at different collective operations (every rank must call them in the same order)",
			`rank 0: loop "a" over set "edges" with 2 arguments`,
			`rank 1: Gather of dat "q"`,
			`rank 2: loop "a" over set "edges" with 2 arguments`,
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("rank %d: error %v does not say %q", r, err, want)
			}
		}
	}
}

// TestHaloOptionalArgumentDiffers checks that an optional argument
// enabled on one rank only fails the loop on every rank.
func TestHaloOptionalArgumentDiffers(t *testing.T) {
	for _, enabledOn := range []int{0, 1} {
		t.Run(fmt.Sprintf("enabled-on-%d", enabledOn), func(t *testing.T) {
			errs := onRanks(t, 2, 0, func(rm *rankMesh) error {
				q := newDat(rm.nodes, "q", 1)
				s := newDat(rm.edges, "s", 1)
				opt := viaMap(q, rm.pedge, 0, core.Read)
				if rm.p.Rank() != enabledOn {
					opt = core.OffArg(core.Float64)
				}
				opt.Optional = true
				return run(rm.job.Exchange(), newLoop("opt", rm.edges, direct(s, core.Write), opt), nil)
			})
			want := `loop "opt" over set "edges": optional argument 1 (op2.Opt) is enabled on some ranks and disabled on others`
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("rank %d: error %v, want one saying %q", r, err, want)
				}
			}
		})
	}
}

// TestHaloReductions checks that Globals reduced by a loop end with the
// same value on every rank: INC counts the declared value once, MIN and
// MAX over the ranks' results.
func TestHaloReductions(t *testing.T) {
	const ranks = 3
	type result struct{ inc, lo, hi []float64 }
	got := make([]result, ranks)
	noErrors(t, onRanks(t, ranks, 0, func(rm *rankMesh) error {
		r := float64(rm.p.Rank())
		inc, lo, hi := newGlobal("inc", 10, 1), newGlobal("lo", 5), newGlobal("hi", -5)
		l := newLoop("reduce", rm.edges, core.Arg{Data: inc, Access: core.Inc, Kind: core.ArgGlobal},
			core.Arg{Data: lo, Access: core.Min, Kind: core.ArgGlobal}, core.Arg{Data: hi, Access: core.Max, Kind: core.ArgGlobal})
		err := run(rm.job.Exchange(), l, func() {
			v := values(inc)
			v[0] += r + 1
			v[1] += 2 * r
			values(lo)[0] = min(values(lo)[0], 3-r)
			values(hi)[0] = max(values(hi)[0], 7*r)
		})
		got[rm.p.Rank()] = result{values(inc), values(lo), values(hi)}
		return err
	}))
	want := result{inc: []float64{10 + 1 + 2 + 3, 1 + 0 + 2 + 4}, lo: []float64{1}, hi: []float64{14}}
	for r, g := range got {
		if fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("rank %d: %v, want %v", r, g, want)
		}
	}
}

// TestHaloWaitTimesOut checks that a rank waiting for a halo that never
// comes fails with an MPI timeout naming the Dat and the peer rank.
func TestHaloWaitTimesOut(t *testing.T) {
	errs := onRanks(t, 2, 300*time.Millisecond, func(rm *rankMesh) error {
		h := rm.job.Exchange()
		h.DropSends = rm.p.Rank() == 1 // as if rank 1 had stopped sending
		q := newDat(rm.nodes, "q", 1)
		q.HaloStale = true
		return run(h, newLoop("avg", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read)), nil)
	})
	if errs[1] != nil {
		t.Errorf("rank 1: %v", errs[1])
	}
	err := errs[0]
	want := `loop "avg" over set "edges": halo exchange waiting for dat "q" from rank 1 (receive of `
	if err == nil || !strings.Contains(err.Error(), want) || !dist.TimedOut(err) {
		t.Errorf("rank 0: error %v, want an MPI timeout saying %q", err, want)
	}
}

// TestAgreeStep checks the agreement of collective operations on
// simulated ranks.
func TestAgreeStep(t *testing.T) {
	tests := []struct {
		name string
		what func(r int) string
		err  func(r int) error
		want string // every rank's error ("" none)
	}{
		{"agree", func(int) string { return "Gather" }, func(int) error { return nil }, ""},
		{"one-fails", func(int) string { return "Gather" }, func(r int) error {
			if r == 2 {
				return errors.New("op2: no memory")
			}
			return nil
		}, "rank 2: no memory"},
		{"two-fail", func(int) string { return "Gather" }, func(r int) error {
			if r > 0 {
				return fmt.Errorf("disk %d", r)
			}
			return nil
		}, "2 ranks failed:\n  rank 1: disk 1\n  rank 2: disk 2"},
		{"different-operations", func(r int) string { return fmt.Sprintf("op%d", r%2) }, func(int) error { return nil },
			"the ranks are at different collective operations (every rank must call them in the same order):\n  rank 0: op0\n  rank 1: op1\n  rank 2: op0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sent := make([]int64, 3)
			errs := disttest.Run(3, 0, func(p *disttest.Proc) error {
				defer func() { sent[p.Rank()] = p.SentBytes() }()
				return dist.AgreeStep(p, tc.what(p.Rank()), tc.err(p.Rank()))
			})
			if tc.name == "agree" {
				for r, n := range sent {
					if n != collective.AgreeBytes {
						t.Errorf("rank %d sent %d bytes to agree, not one agreement's %d", r, n, collective.AgreeBytes)
					}
				}
			}
			for r, err := range errs {
				if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
					t.Errorf("rank %d: %v, want %q", r, err, tc.want)
				}
			}
		})
	}
}

// TestAgreeStepSharesSentinels: a sentinel shared with dist.Share that
// one rank's error matches is matched by every rank's error, and a rank's
// own error by none (every rank's error matches alike).
func TestAgreeStepSharesSentinels(t *testing.T) {
	errMissing := errors.New("libfoo is not available")
	dist.Share("test-libfoo", errMissing)
	own := &os.PathError{Op: "open", Path: "/x", Err: errors.New("gone")}
	errs := disttest.Run(3, 0, func(p *disttest.Proc) error {
		var err error
		switch p.Rank() {
		case 1:
			err = fmt.Errorf("loading: %w", errMissing)
		case 2:
			err = own
		}
		return dist.AgreeStep(p, "load libfoo", err)
	})
	for r, err := range errs {
		if !errors.Is(err, errMissing) {
			t.Errorf("rank %d: %v does not match the sentinel rank 1's error matches", r, err)
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			t.Errorf("rank %d: %v matches rank 2's own *os.PathError", r, err)
		}
	}
}

// TestAgreeStepTimesOut checks that an agreement one rank never joins
// fails on the others with a timeout (which op2 turns into an abort).
func TestAgreeStepTimesOut(t *testing.T) {
	errs := disttest.Run(2, 200*time.Millisecond, func(p *disttest.Proc) error {
		if p.Rank() == 1 {
			return nil
		}
		return dist.AgreeStep(p, "Partition", nil)
	})
	var te *mpi.TimeoutError
	if err := errs[0]; !errors.As(err, &te) || !strings.Contains(err.Error(), "rank 0: Partition: agreeing with the other ranks") {
		t.Errorf("rank 0: %v, want a timeout agreeing on Partition", err)
	}
}
