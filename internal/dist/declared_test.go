package dist

import (
	"slices"
	"testing"

	"github.com/goop2/op2/internal/core"
)

func TestDeclaredNumbering(t *testing.T) {
	// Three elements renumbered: local 0, 1, 2 were declared 2, 0, 1.
	from := &core.Set{Name: "from", Owned: 3, Total: 3, Declared: []int32{2, 0, 1}}
	to := &core.Set{Name: "to", Owned: 2, Total: 2, Declared: []int32{1, 0}}
	if got := DeclaredNumbers(from); !slices.Equal(got, []int64{2, 0, 1}) {
		t.Errorf("DeclaredNumbers = %v, want %v", got, from.Declared)
	}
	if got, want := ToDeclared([]int32{10, 11, 20, 21, 30, 31}, 2, from.Declared), []int32{20, 21, 30, 31, 10, 11}; !slices.Equal(got, want) {
		t.Errorf("ToDeclared = %v, want %v", got, want)
	}
	m := &core.Map{Name: "m", From: from, To: to, Arity: 1, Table: []int32{0, 1, 1}}
	// Row of declared element 2 (local 0) names declared target 1, and
	// so on.
	if got, want := DeclaredTable(m), []int32{0, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("DeclaredTable = %v, want %v", got, want)
	}
	plain := &core.Map{Name: "p", From: &core.Set{Owned: 2, Total: 3}, To: &core.Set{Owned: 2, Total: 2}, Arity: 1, Table: []int32{1, 0, 1}}
	if got, want := DeclaredTable(plain), []int32{1, 0}; !slices.Equal(got, want) {
		t.Errorf("DeclaredTable without renumbering = %v, want %v", got, want)
	}
}
