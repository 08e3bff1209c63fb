package engine

import (
	"fmt"
	"sync"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// Kernel is a kernel as op2's Kernel declares it: its name and source
// (the embedded core.Kernel), read once, on first use.
type Kernel struct {
	core.Kernel

	once sync.Once
	info *core.KernelInfo
	err  error

	consts UsedConsts // the constants it refers to, by registry
}

// Parse reads the kernel's source the first time (cfront.ParseKernel)
// and returns what it read, or why it could not, every time; wrap makes
// the error the API's. The kernel's Source becomes the source with the
// macros that write the definition expanded (the same program), where
// the reader's positions are.
func (k *Kernel) Parse(wrap func(error) error) (*core.KernelInfo, error) {
	k.once.Do(func() {
		if !clex.IsIdent(k.Name) {
			k.err = wrap(fmt.Errorf("kernel name %q is not a C identifier", k.Name))
			return
		}
		k.info, k.err = cfront.ParseKernel(k.Source, k.Name)
		if k.err != nil {
			k.err = wrap(fmt.Errorf("kernel %q: %w", k.Name, k.err))
			return
		}
		if !k.CXX && k.info.CXXOnly != "" {
			k.info, k.err = nil, wrap(fmt.Errorf("kernel %q has %s, which is C++, and the kernel is C; declare it C++ with Kernel.CXX()", k.Name, k.info.CXXOnly))
			return
		}
		k.Source = k.info.Source
		k.Info = k.info
	})
	return k.info, k.err
}

// UsedConsts returns the constants of reg the parsed kernel refers to,
// recomputed only when constants have been declared or removed since
// the last call.
func (k *Kernel) UsedConsts(reg *Consts) []*core.Const {
	return k.consts.Of(reg, k.info.Idents)
}
