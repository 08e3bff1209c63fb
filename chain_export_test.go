package op2

// RecordedLoops is the number of loops recorded and not yet run (see
// Chain).
func RecordedLoops() int {
	rt.proc.mu.Lock()
	defer rt.proc.mu.Unlock()
	return rt.proc.queue.n
}

// TiledDistributedRuns is the number of tiled runs of recorded loops
// under MPI so far.
func TiledDistributedRuns() int {
	rt.proc.mu.Lock()
	defer rt.proc.mu.Unlock()
	return rt.proc.tiling.distributed
}
