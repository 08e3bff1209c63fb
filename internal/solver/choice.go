package solver

import (
	"fmt"
	"math"
	"strings"

	"github.com/goop2/op2/internal/petsc"
)

// Choice is what op2.SolverOptions choose: who solves, how, and when to
// stop.
type Choice struct {
	Package, Method, Precond, PETScOptions string
	RTol, ATol                             float64
	MaxIts                                 int
	Norm                                   petsc.NormType
}

// Settle fills in the defaults (the native CG with Jacobi, a relative
// tolerance of 1e-8, 10 000 iterations) and checks the choice, returning
// an error naming what is wrong (the caller prefixes the API's name).
func (c *Choice) Settle() error {
	if c.Package == "" {
		c.Package = "native"
	}
	if c.Method == "" {
		c.Method = "cg"
	}
	if c.Precond == "" {
		c.Precond = "jacobi"
	}
	if c.RTol == 0 && c.ATol == 0 {
		c.RTol = 1e-8
	}
	if c.MaxIts == 0 {
		c.MaxIts = 10000
	}
	native := c.Package == "native"
	switch {
	case !native && c.Package != "petsc":
		return fmt.Errorf("package %q; there are \"native\" (GoOP2's own solvers, the default) and \"petsc\"", c.Package)
	case native && c.PETScOptions != "":
		return fmt.Errorf("PETSc options %q for the native solver; they need Package \"petsc\"", c.PETScOptions)
	case !native && strings.ContainsRune(c.Method+c.Precond, ' '):
		return fmt.Errorf("method %q or preconditioner %q is not a PETSc type name (PETScOptions takes options)", c.Method, c.Precond)
	case native && c.Method != "cg" && c.Method != "bicgstab":
		return fmt.Errorf("method %q; the built-in solver has \"cg\" (conjugate gradients) and \"bicgstab\"", c.Method)
	case native && c.Precond != "jacobi" && c.Precond != "none":
		return fmt.Errorf("preconditioner %q; the built-in solver has \"jacobi\" and \"none\"", c.Precond)
	case c.RTol < 0 || c.ATol < 0 || math.IsNaN(c.RTol) || math.IsNaN(c.ATol):
		return fmt.Errorf("tolerances %g (relative) and %g (absolute) must be at least 0", c.RTol, c.ATol)
	case c.MaxIts < 0:
		return fmt.Errorf("at most %d iterations", c.MaxIts)
	case c.Norm < petsc.NormDefault || c.Norm > petsc.NormNone:
		return fmt.Errorf("norm type %d; there are NormDefault, NormPreconditioned, NormUnpreconditioned, NormNatural and NormNone", int(c.Norm))
	case native && c.Norm == petsc.NormNone:
		return fmt.Errorf("the native solvers do not support the norm %q (NormNone): their convergence test needs one", c.Norm)
	case native && c.Method == "bicgstab" && c.Norm == petsc.NormNatural:
		return fmt.Errorf("method %q does not support the natural norm (NormNatural); it has NormPreconditioned (left preconditioning, the default) and NormUnpreconditioned (right preconditioning), as PETSc's bcgs", c.Method)
	}
	return nil
}
