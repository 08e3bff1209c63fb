package plan

import "sync/atomic"

var checking atomic.Bool

// CheckingEnabled reports whether callers should verify every new plan with
// Check. The op2 run time sets it from its configuration (Config.PlanCheck,
// environment variable OP2_PLAN_CHECK).
func CheckingEnabled() bool { return checking.Load() }

// SetChecking switches plan checking on or off for the whole process. It is
// safe to call concurrently with CheckingEnabled.
func SetChecking(on bool) { checking.Store(on) }
