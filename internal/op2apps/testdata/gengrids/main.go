// Command gengrids writes the meshes the tests of internal/op2apps give the
// ports, as the files OP2-Common's applications read: FE_grid.dat (aero,
// ChannelBump(AeroNI, AeroNJ)) and new_grid.dat (reduction, the Airfoil
// C-grid mesh.Generate(ReductionI, ReductionJ)), in the directory named by
// its argument. docs/history/op2apps-2026-11-27.txt runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goop2/op2/internal/op2apps"
	"github.com/goop2/op2/mesh"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gengrids:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: gengrids DIR")
	}
	dir := os.Args[1]
	a, err := op2apps.ChannelBump(op2apps.AeroNI, op2apps.AeroNJ)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "FE_grid.dat"))
	if err != nil {
		return err
	}
	if err := a.Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	m, err := mesh.Generate(op2apps.ReductionI, op2apps.ReductionJ)
	if err != nil {
		return err
	}
	return m.WriteFile(filepath.Join(dir, "new_grid.dat"))
}
