package op2

// RecordedLoops is the number of loops recorded and not yet run (see
// Chain).
func RecordedLoops() int {
	mu.Lock()
	defer mu.Unlock()
	return queue.n
}
