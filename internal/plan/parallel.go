package plan

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minParallel is the smallest iteration set for which Build spreads work
// over several goroutines; below it the bookkeeping costs more than it saves.
const minParallel = 1 << 15

// workers returns how many goroutines to use for tasks independent pieces
// of work over an iteration set of elems elements.
func workers(tasks, elems int) int {
	if elems < minParallel {
		return 1
	}
	return max(1, min(tasks, runtime.GOMAXPROCS(0)))
}

// run calls f(i) for every i in [0,n), on w goroutines (inline when w <= 1).
// Each task must write only memory no other task touches.
func run(n, w int, f func(i int)) {
	if w <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(w, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
