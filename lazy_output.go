package op2

import "github.com/goop2/op2/internal/engine"

// Kernels with effects run at once in lazy mode.
//
// Lazy mode (Config.Lazy, the default on the host backends) defers a loop until
// something reads its results; a kernel that prints (printf, puts,
// fwrite, std::cout...), writes a file or may end the process has
// effects no accessor reads, and a program that ends after its loop
// would never run it. So in lazy mode such a loop runs when it is issued
// (after the loops recorded before it), its effects in program order, as
// without lazy mode. Inside a Chain scope it is recorded as any loop:
// the scope's end runs it. engine.Kernel.Parse decides once per kernel
// (core.KernelInfo.HasEffects).

// runsAtOnce reports whether runtime r, lazy outside any chain scope,
// runs a loop of kernel k at once rather than recording it: k has
// effects. A kernel that does not parse is recorded, which reports its
// error. Caller holds the lock.
func runsAtOnce(r *engine.Runtime, k *Kernel) bool {
	if k == nil || r.InChain() {
		return false
	}
	info, err := k.parse()
	return err == nil && info.HasEffects
}
