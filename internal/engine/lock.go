package engine

import (
	"errors"

	"github.com/goop2/op2/internal/core"
)

// Mode says what taking the lock (Process.Lock) does with the loops
// recorded so far (see the root package's Chain).
type Mode struct {
	kind lockKind
	s    *core.Storage // ForStorage's
}

type lockKind uint8

const (
	lockNoData lockKind = iota
	lockData
	lockStatus
	lockCollective
	lockStorage
)

// The modes of Lock.
var (
	// ForNoData: the caller touches no data a loop can change (it reads
	// the configuration or counters, declares something, or records or
	// runs a loop itself, forcing what it must with Force); the recorded
	// loops stay recorded.
	ForNoData = Mode{kind: lockNoData}
	// ForData: an access to data, a loop that runs now, anything that
	// must see every loop issued so far: the recorded loops run first,
	// and Lock returns their failure (*op2.ChainError), after a failure
	// ForStatus kept.
	ForData = Mode{kind: lockData}
	// ForStatus: ForData for calls that neither return data values nor
	// report errors (State, Timings, Stats, EnableTiming,
	// ResetTimings): a recorded loop's failure is kept for the next call
	// that forces, which returns it (or panics with it), instead of
	// being lost; Lock returns nil.
	ForStatus = Mode{kind: lockStatus}
	// ForCollective: ForData for a call every rank makes at the same
	// point (see Chain under MPI).
	ForCollective = Mode{kind: lockCollective}
)

// ForStorage is ForData for an accessor of the Dat or Global whose
// storage is s: on several ranks it refuses to run loops recorded in a
// chain (*op2.ChainAccessError), since the other ranks may not be running
// them; those lazy mode records there send nothing, and run.
func ForStorage(s *core.Storage) Mode { return Mode{kind: lockStorage, s: s} }

// Lock takes the lock that serialises loops of every runtime and host
// access to data, in mode m, for the API call named caller (as "Dat.Data"
// or "Wait": the name a *op2.ChainAccessError gives): the one place it is
// taken. It returns with the lock held whether or not the recorded loops
// ran; a Go panic while they run releases it (the panic goes on), so that
// a program that recovers can go on calling op2.
func (p *Process) Lock(m Mode, caller string) (err error) {
	p.mu.Lock()
	p.caller = caller
	q := &p.queue
	if m.kind == lockNoData || m.kind != lockCollective && q.n == 0 && q.failed == nil {
		return nil // nothing recorded to run or refuse (Force would return at once)
	}
	held := false
	defer func() {
		if !held {
			p.mu.Unlock()
		}
	}()
	err = p.lockRun(m, caller)
	held = true
	return err
}

// lockRun is what Lock does with the recorded loops, under the lock.
func (p *Process) lockRun(m Mode, caller string) error {
	switch m.kind {
	case lockData:
		return p.Force()
	case lockStatus:
		if refused, err := p.force(); err != nil && !refused {
			p.queue.failed = err
		}
	case lockCollective:
		if caller != "Finalize" && p.mpiEnded() {
			return p.endedError(caller)
		}
		return p.ForceCollective()
	case lockStorage:
		if err := p.refuseForce(m.s); err != nil {
			return err
		}
		return p.Force()
	}
	return nil
}

// Unlock releases the lock Lock took.
func (p *Process) Unlock() { p.mu.Unlock() }

// Force runs the recorded loops, as Lock(ForData) does, for a caller
// that holds the lock.
func (p *Process) Force() error {
	_, err := p.force()
	return err
}

// force is Force, also reporting whether it refused to run the loops
// (refuseForce).
func (p *Process) force() (refused bool, err error) {
	q := &p.queue
	if q.n == 0 && q.failed == nil {
		return false, nil
	}
	if err := p.refuseForce(nil); err != nil {
		return true, err
	}
	if q.n > 0 {
		err = p.keepFindings(p.runQueue())
	}
	if kept := q.failed; kept != nil {
		q.failed = nil
		if err == nil {
			err = kept
		} else {
			err = errors.Join(kept, err)
		}
	}
	return false, err
}

// ForceCollective is Force for a call every rank makes at the same
// point (Lock(ForCollective)). Caller holds the lock.
func (p *Process) ForceCollective() error {
	p.collective = true
	defer func() { p.collective = false }()
	return p.Force()
}

// refuseForce returns a *op2.ChainAccessError when the queue holds loops
// of a runtime on several ranks and the caller (the API call that took
// the lock) is not collective; s, if not nil, is the data it accesses.
// Caller holds the lock.
func (p *Process) refuseForce(s *core.Storage) error {
	if p.distQueued == 0 || p.collective || p.queue.n == 0 {
		return nil
	}
	data := ""
	if s != nil {
		data = s.Name
	}
	rank, ranks := 0, 0
	if w := p.world; w != nil {
		rank, ranks = w.Rank(), w.Size()
	}
	caller := p.caller
	if caller == "" {
		caller = "a call"
	}
	return p.api.ChainAccess(caller, data, rank, ranks, p.queue.n)
}
