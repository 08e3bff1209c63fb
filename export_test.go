package op2

// SetMaxPrograms lowers the program cache's capacity for a test and
// returns a function that restores it.
func SetMaxPrograms(n int) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old := rt.x.MaxPrograms()
	rt.x.SetMaxPrograms(n)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		rt.x.SetMaxPrograms(old)
	}
}

// HaloExchanges is the number of Dat halo exchanges started so far.
func HaloExchanges() int {
	mu.Lock()
	defer mu.Unlock()
	if distState.halo == nil {
		return 0
	}
	return distState.halo.exchanges
}
