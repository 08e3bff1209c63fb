package plan

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

var (
	checkEnvOnce sync.Once
	checkEnv     bool
	// checkForce is 0 when SetChecking was never called, 1 when checking
	// is forced off and 2 when it is forced on.
	checkForce atomic.Int32
)

// CheckingEnabled reports whether plans should be verified with Check after
// they are built. It is true when the environment variable OP2_PLAN_CHECK
// holds a true value ("1", "true", "t", in any case) when first consulted,
// unless SetChecking has overridden it.
func CheckingEnabled() bool {
	switch checkForce.Load() {
	case 1:
		return false
	case 2:
		return true
	}
	checkEnvOnce.Do(func() { checkEnv = envTrue(os.Getenv("OP2_PLAN_CHECK")) })
	return checkEnv
}

// envTrue reports whether an environment value switches a feature on.
func envTrue(v string) bool {
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && on
}

// SetChecking overrides the OP2_PLAN_CHECK setting for the whole process.
// It is safe to call concurrently with CheckingEnabled.
func SetChecking(on bool) {
	if on {
		checkForce.Store(2)
	} else {
		checkForce.Store(1)
	}
}

// Cache memoises plans by a caller-supplied key. The key must determine the
// Input completely (the loop's iteration set, its arguments' maps, indices
// and access modes, and the block size); the cache never compares inputs.
// The zero value is an empty cache ready for use, and a Cache is safe for
// concurrent use. Concurrent misses on one key build the plan once; a
// failed build is not cached.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	plan *Plan
	err  error
}

// Get returns the plan stored under key, building it from in on a miss.
// When CheckingEnabled is true a freshly built plan is verified with Check
// and a failure is returned as the error.
func (c *Cache) Get(key string, in Input) (*Plan, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[string]*cacheEntry)
	}
	ent, ok := c.entries[key]
	if !ok {
		ent = new(cacheEntry)
		c.entries[key] = ent
	}
	c.mu.Unlock()

	ent.once.Do(func() {
		p, err := Build(in)
		if err == nil && CheckingEnabled() {
			err = p.Check(in)
		}
		if err != nil {
			p = nil
		}
		ent.plan, ent.err = p, err
	})
	if ent.err != nil {
		c.mu.Lock()
		if c.entries[key] == ent {
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
	return ent.plan, ent.err
}

// Len returns the number of plans in the cache.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Reset empties the cache.
func (c *Cache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}
