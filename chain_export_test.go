package op2

// RecordedLoops is the number of loops recorded and not yet run (see
// Chain).
func RecordedLoops() int {
	mu.Lock()
	defer mu.Unlock()
	return queue.n
}

// TiledDistributedRuns is the number of tiled runs of recorded loops
// under MPI so far.
func TiledDistributedRuns() int {
	mu.Lock()
	defer mu.Unlock()
	return tiling.distributed
}
