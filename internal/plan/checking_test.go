package plan

import "testing"

func TestSetChecking(t *testing.T) {
	old := CheckingEnabled()
	defer SetChecking(old)
	SetChecking(true)
	if !CheckingEnabled() {
		t.Error("SetChecking(true) ignored")
	}
	SetChecking(false)
	if CheckingEnabled() {
		t.Error("SetChecking(false) ignored")
	}
}
