//go:build !race

package engine

// raceEnabled: the race detector is on, and allocation counts are its own.
const raceEnabled = false
