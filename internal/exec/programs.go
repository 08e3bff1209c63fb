package exec

import (
	"container/list"

	"github.com/goop2/op2/internal/core"
)

// MaxPrograms is the number of compiled loop programs kept in memory. A
// program is keyed by the backend, the kernel's content (its name and
// source, not the Kernel object: kernels declared again with the same
// source share one program) and the loop's signature. When a program
// beyond this number is needed, the least recently used one is dropped
// (and built again, from the disk cache, if its loop runs again), so
// programs that generate kernels with ever-different sources run in
// bounded memory.
const MaxPrograms = 1024

// programCache holds programs by key, most recently used first. Finding a
// program and marking it used allocates nothing.
type programCache struct {
	byKey   map[string]*list.Element
	lru     list.List // of *programEntry
	max     int       // 0: MaxPrograms
	removed uint64    // programs dropped so far
}

func (c *programCache) limit() int {
	if c.max > 0 {
		return c.max
	}
	return MaxPrograms
}

type programEntry struct {
	key string
	p   Program
	sig *core.Signature
}

func (c *programCache) get(key []byte) (Program, *core.Signature, bool) {
	e, ok := c.byKey[string(key)]
	if !ok {
		return nil, nil, false
	}
	c.lru.MoveToFront(e)
	pe := e.Value.(*programEntry)
	return pe.p, pe.sig, true
}

func (c *programCache) put(key []byte, p Program, sig *core.Signature) {
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
	}
	for c.lru.Len() >= c.limit() {
		c.remove(c.lru.Back())
	}
	k := string(key)
	c.byKey[k] = c.lru.PushFront(&programEntry{key: k, p: p, sig: sig})
}

func (c *programCache) remove(e *list.Element) {
	pe := c.lru.Remove(e).(*programEntry)
	delete(c.byKey, pe.key)
	c.removed++
	if r, ok := pe.p.(Releaser); ok {
		r.Release()
	}
}

// clear drops every program.
func (c *programCache) clear() {
	for c.lru.Len() > 0 {
		c.remove(c.lru.Back())
	}
}

func (c *programCache) len() int { return c.lru.Len() }
