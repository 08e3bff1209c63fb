package engine

import (
	"testing"

	"github.com/goop2/op2/internal/core"
)

func TestConstsUsedFollowDeclarations(t *testing.T) {
	reg := NewConsts()
	gam, eps := &core.Const{Name: "gam"}, &core.Const{Name: "eps"}
	if !reg.Declare(gam) || !reg.Declare(eps) || reg.Declare(&core.Const{Name: "gam"}) {
		t.Fatal("Declare: want two new names accepted and a repeated one refused")
	}
	idents := map[string]bool{"gam": true, "eps": true, "x": true}
	var u UsedConsts
	if got := u.Of(reg, idents); len(got) != 2 || got[0] != eps || got[1] != gam {
		t.Fatalf("Of = %v, want [eps gam]", got)
	}
	reg.Remove(gam)
	if got := u.Of(reg, idents); len(got) != 1 || got[0] != eps {
		t.Fatalf("Of after Remove = %v, want [eps]", got)
	}
	if got := len(reg.All()); got != 1 {
		t.Errorf("All has %d constants, want 1", got)
	}
	if got := u.Of(NewConsts(), idents); got == nil || len(got) != 0 {
		t.Errorf("Of an empty registry = %#v, want an empty non-nil list", got)
	}
}
