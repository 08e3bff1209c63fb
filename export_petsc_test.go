package op2

import "github.com/goop2/op2/internal/petsc"

// PETScMatInfo is MatGetInfo of this rank's part of PETSc's copy of each
// matrix s solved with, in the order s met them.
func PETScMatInfo(s *Solver) ([]petsc.MatInfo, error) {
	if s.petsc == nil {
		return nil, nil
	}
	var out []petsc.MatInfo
	for _, sys := range s.petsc.Systems() {
		info, err := sys.A.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}
