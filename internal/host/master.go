package host

import (
	"runtime"
	"sync"
)

// MasterJob is work that starts OpenMP parallel regions, run by OnMaster.
type MasterJob interface {
	RunOnMaster() error
}

// master is the OS thread that starts every parallel region.
var master struct {
	once sync.Once
	req  chan MasterJob
	done chan error
}

// OnMaster runs j on the master thread and returns its error. Every
// OpenMP parallel region of the process (the openmp backend's loops,
// Mat.Mult on several threads) starts from that one OS thread. OpenMP
// keeps a pool of worker threads per thread that starts regions, and Go
// runs successive calls into C on whichever thread is free: starting
// regions from many threads would create many pools, more workers than
// CPUs, and make OpenMP stop spinning at barriers and sleep instead
// (measured: a random-mesh increment loop with 572 colours took 30-45 ms
// instead of 17-21 ms on 2 threads; the product of a 10 201-row matrix
// on 2 threads made a CG iteration 0.29 ms instead of 0.18 when it ran
// outside the master). Work on one thread needs no master: run it on
// the calling thread. Passing a pointer as j allocates nothing.
func OnMaster(j MasterJob) error {
	master.once.Do(func() {
		master.req = make(chan MasterJob)
		master.done = make(chan error)
		go func() {
			runtime.LockOSThread() // for good: this thread is the master
			for q := range master.req {
				master.done <- q.RunOnMaster()
			}
		}()
	})
	master.req <- j
	return <-master.done
}
