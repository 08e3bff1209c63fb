package core

import "testing"

// TestOrderSensitive: what an argument leaves depends on the order of the
// loop's elements for floating-point Global reductions and for changes
// through a map, but integer increments, minima and maxima through a map
// combine alike in any order, and direct data and reads never depend on it.
func TestOrderSensitive(t *testing.T) {
	f64 := &Storage{Name: "f", Type: Float64, Dim: 1}
	i32 := &Storage{Name: "i", Type: Int32, Dim: 1}
	m := &Map{Name: "m", Arity: 2}
	for _, c := range []struct {
		name string
		arg  Arg
		want bool
	}{
		{"a float Global sum", Arg{Kind: ArgGlobal, Data: f64, Access: Inc}, true},
		{"a float Global minimum", Arg{Kind: ArgGlobal, Data: f64, Access: Min}, true},
		{"an integer Global sum", Arg{Kind: ArgGlobal, Data: i32, Access: Inc}, false},
		{"a float Global read", Arg{Kind: ArgGlobal, Data: f64, Access: Read}, false},
		{"a disabled optional sum", Arg{Kind: ArgGlobal, Data: f64, Access: Inc, Off: true}, false},
		{"float increments through a map", Arg{Kind: ArgIndirect, Data: f64, Map: m, Access: Inc}, true},
		{"float increments through every column", Arg{Kind: ArgVector, Data: f64, Map: m, Idx: -1, Access: Inc}, true},
		{"integer increments through a map", Arg{Kind: ArgIndirect, Data: i32, Map: m, Access: Inc}, false},
		{"integer maxima through a map", Arg{Kind: ArgIndirect, Data: i32, Map: m, Access: Max}, false},
		{"integer writes through a map", Arg{Kind: ArgIndirect, Data: i32, Map: m, Access: Write}, true},
		{"a read through a map", Arg{Kind: ArgIndirect, Data: f64, Map: m, Access: Read}, false},
		{"direct float increments", Arg{Kind: ArgDirect, Data: f64, Access: Inc}, false},
	} {
		if got := c.arg.OrderSensitive(); got != c.want {
			t.Errorf("%s: OrderSensitive %v, want %v", c.name, got, c.want)
		}
		l := Loop{Args: []Arg{{Kind: ArgDirect, Data: f64, Access: Read}, c.arg}}
		if got := l.OrderSensitive(); got != c.want {
			t.Errorf("%s: the loop's OrderSensitive %v, want %v", c.name, got, c.want)
		}
	}
}
