package op2

// SetMaxPrograms lowers the program cache's capacity for a test and
// returns a function that restores it.
func SetMaxPrograms(n int) (restore func()) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	old := rt.x.MaxPrograms()
	rt.x.SetMaxPrograms(n)
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		rt.x.SetMaxPrograms(old)
	}
}
