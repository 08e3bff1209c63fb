// Package textnum parses the numbers of text mesh files from bytes,
// without the allocation of a string per number.
package textnum

import "math"

// ParseInt parses a decimal integer with an optional sign. ok is false
// for anything else, including values outside the int64 range.
func ParseInt(b []byte) (v int64, ok bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 || u > (math.MaxInt64+1)/10 {
			return 0, false
		}
		u = u*10 + uint64(d)
	}
	if neg {
		if u > math.MaxInt64+1 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
