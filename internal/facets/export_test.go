package facets

// SetRoundBytes sets the bound on a round of the halves' exchange and
// returns a function that restores it.
func SetRoundBytes(n int) (restore func()) {
	old := roundBytes
	roundBytes = n
	return func() { roundBytes = old }
}
