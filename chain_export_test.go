package op2

// RecordedLoops is the number of loops recorded and not yet run (see
// Chain).
func RecordedLoops() int {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	return rt.proc.Recorded()
}

// TiledDistributedRuns is the number of tiled runs of recorded loops
// under MPI so far.
func TiledDistributedRuns() int {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	return rt.proc.TiledDistributedRuns()
}
