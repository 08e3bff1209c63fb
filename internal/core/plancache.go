package core

import (
	"runtime"
	"sync/atomic"
	"weak"
)

// Execution plans, and the device copies of their arrays, are built for one
// iteration set and the maps of one loop and serve nobody once those are
// gone. PlanCache is the one cache all backends keep them in: an entry
// lives for as long as its set and every one of its maps can still be
// reached, and is dropped (and released) at the next insertion after any of
// them has been garbage collected.

// collected counts the Sets and Maps collected so far; a change tells the
// caches that some entries may have lost their set or maps.
var collected atomic.Uint64

// plansHeld counts the entries of every PlanCache, for Stats.
var plansHeld atomic.Int64

// Track makes the plan caches notice when the object p points to (a Set or
// a Map, which the public objects hold as their first field) is garbage
// collected. Call it once per object, when it is created.
func Track[T any](p *T) {
	runtime.AddCleanup(p, func(struct{}) { collected.Add(1) }, struct{}{})
}

// PlansHeld is the number of entries held by all plan caches.
func PlansHeld() int { return int(plansHeld.Load()) }

// PlanCache holds values (plans) built for a loop's iteration set and maps,
// under a key the backend chooses (which must include the set's and maps'
// IDs). It is not safe for concurrent use.
type PlanCache[V any] struct {
	entries map[string]*planEntry[V]
	release func(V)
	seen    uint64
	held    *atomic.Int64 // entries, shared with the cleanup that uncounts them
}

type planEntry[V any] struct {
	v    V
	set  weak.Pointer[Set]
	maps []weak.Pointer[Map]
}

func (e *planEntry[V]) alive() bool {
	if e.set.Value() == nil {
		return false
	}
	for _, m := range e.maps {
		if m.Value() == nil {
			return false
		}
	}
	return true
}

// NewPlanCache returns an empty cache; release (if not nil) frees what a
// value holds outside Go memory when the value is dropped.
func NewPlanCache[V any](release func(V)) *PlanCache[V] {
	c := &PlanCache[V]{entries: map[string]*planEntry[V]{}, release: release, held: new(atomic.Int64)}
	// A cache dropped with its backend or program no longer counts.
	runtime.AddCleanup(c, func(held *atomic.Int64) { plansHeld.Add(-held.Load()) }, c.held)
	return c
}

// Get returns the value stored under key.
func (c *PlanCache[V]) Get(key []byte) (V, bool) {
	e, ok := c.entries[string(key)]
	if !ok {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put stores v under key for the loop's set and maps, first dropping the
// entries whose set or maps have been collected.
func (c *PlanCache[V]) Put(key []byte, l *Loop, v V) {
	c.sweep()
	e := &planEntry[V]{v: v, set: weak.Make(l.Set)}
	for i := range l.Args {
		if m := l.Args[i].Map; m != nil {
			e.maps = append(e.maps, weak.Make(m))
		}
	}
	if old, ok := c.entries[string(key)]; ok {
		c.drop(old)
	}
	c.entries[string(key)] = e
	c.held.Add(1)
	plansHeld.Add(1)
}

// Len is the number of entries.
func (c *PlanCache[V]) Len() int { return len(c.entries) }

// Clear drops every entry.
func (c *PlanCache[V]) Clear() {
	for k, e := range c.entries {
		delete(c.entries, k)
		c.drop(e)
	}
}

func (c *PlanCache[V]) sweep() {
	g := collected.Load()
	if g == c.seen {
		return
	}
	c.seen = g
	for k, e := range c.entries {
		if !e.alive() {
			delete(c.entries, k)
			c.drop(e)
		}
	}
}

func (c *PlanCache[V]) drop(e *planEntry[V]) {
	c.held.Add(-1)
	plansHeld.Add(-1)
	if c.release != nil {
		c.release(e.v)
	}
}
