package op2

// SetMaxPrograms lowers the program cache's capacity for a test and
// returns a function that restores it.
func SetMaxPrograms(n int) (restore func()) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	old := maxPrograms
	maxPrograms = n
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		maxPrograms = old
	}
}
