package op2apps

import (
	"math"

	"github.com/goop2/op2"
)

// AeroIters is the number of aero's outer (fixpoint) iterations (niter).
const AeroIters = 20

// AeroStep is what aero prints after each outer iteration ("%d %d
// %3.15E"): the iteration, the conjugate-gradient iterations it took and
// the rms of the update.
type AeroStep struct {
	Iter, Inner int
	RMS         float64
}

// aeroConsts are aero's constants, as aero.cpp sets them.
func aeroConsts() []struct {
	name string
	v    []float64
} {
	gam := 1.4
	gm1 := gam - 1.0
	minf := 0.1
	return []struct {
		name string
		v    []float64
	}{
		{"gam", []float64{gam}},
		{"gm1", []float64{gm1}},
		{"gm1i", []float64{1.0 / gm1}},
		{"m2", []float64{minf * minf}},
		{"wtg1", []float64{0.5, 0.5}},
		{"xi1", []float64{0.211324865405187, 0.788675134594813}},
		{"Ng1", []float64{0.788675134594813, 0.211324865405187, 0.211324865405187, 0.788675134594813}},
		{"Ng1_xi", []float64{-1, -1, 1, 1}},
		{"wtg2", []float64{0.25, 0.25, 0.25, 0.25}},
		{"Ng2", []float64{
			0.622008467928146, 0.166666666666667, 0.166666666666667, 0.044658198738520,
			0.166666666666667, 0.622008467928146, 0.044658198738520, 0.166666666666667,
			0.166666666666667, 0.044658198738520, 0.622008467928146, 0.166666666666667,
			0.044658198738520, 0.166666666666667, 0.166666666666667, 0.622008467928146}},
		{"Ng2_xi", []float64{
			-0.788675134594813, 0.788675134594813, -0.211324865405187, 0.211324865405187,
			-0.788675134594813, 0.788675134594813, -0.211324865405187, 0.211324865405187,
			-0.211324865405187, 0.211324865405187, -0.788675134594813, 0.788675134594813,
			-0.211324865405187, 0.211324865405187, -0.788675134594813, 0.788675134594813,
			-0.788675134594813, -0.211324865405187, 0.788675134594813, 0.211324865405187,
			-0.211324865405187, -0.788675134594813, 0.211324865405187, 0.788675134594813,
			-0.788675134594813, -0.211324865405187, 0.788675134594813, 0.211324865405187,
			-0.211324865405187, -0.788675134594813, 0.211324865405187, 0.788675134594813}},
		{"minf", []float64{minf}},
		{"freq", []float64{1}},
		{"kappa", []float64{1}},
		{"nmode", []float64{0}},
		{"mfan", []float64{1}},
	}
}

// RunAero runs OP2's aero (aero_plain) on mesh m for AeroIters outer
// iterations: the loops, arguments and Globals of aero.cpp, each cell's
// four nodes passed as four arguments through the map as aero_plain
// passes them. It returns what aero prints per iteration. Under MPI rank 0
// passes the mesh and the others nil, and the mesh is partitioned with the
// partitioner p makes for the nodes and their coordinates (by blocks where
// p is nil).
func RunAero(m *AeroMesh, p PartitionFunc) ([]AeroStep, error) {
	if m == nil {
		m = &AeroMesh{}
	}
	nodes, err := op2.NewSet(m.NNode, "nodes")
	if err != nil {
		return nil, err
	}
	bnodes, err := op2.NewSet(m.NBnode, "bedges")
	if err != nil {
		return nil, err
	}
	cells, err := op2.NewSet(m.NCell, "cells")
	if err != nil {
		return nil, err
	}
	pbnodes, err := op2.NewMap(bnodes, nodes, 1, m.Bnode, "pbedge")
	if err != nil {
		return nil, err
	}
	pcell, err := op2.NewMap(cells, nodes, 4, m.Cell, "pcell")
	if err != nil {
		return nil, err
	}
	const minf = 0.1
	phim := make([]float64, m.NNode)
	for i := range phim {
		phim[i] = minf * m.X[2*i]
	}
	var dats [6]*op2.Dat[float64]
	for k, d := range []struct {
		set  *op2.Set
		dim  int
		v    []float64
		name string
	}{
		{nodes, 2, m.X, "p_x"}, {nodes, 1, phim, "p_phim"}, {nodes, 1, nil, "p_resm"},
		{nodes, 1, nil, "p_V"}, {nodes, 1, nil, "p_P"}, {nodes, 1, nil, "p_U"},
	} {
		if dats[k], err = op2.NewDat(d.set, d.dim, d.v, d.name); err != nil {
			return nil, err
		}
	}
	pXm, pPhim, pResm, pV, pP, pU := dats[0], dats[1], dats[2], dats[3], dats[4], dats[5]
	pK, err := op2.NewDat[float64](cells, 16, nil, "p_K")
	if err != nil {
		return nil, err
	}
	for _, c := range aeroConsts() {
		k, err := op2.NewConst(len(c.v), c.v, c.name)
		if err != nil {
			return nil, err
		}
		defer k.Remove()
	}
	if err := partition(nodes, pXm, p); err != nil {
		return nil, err
	}
	var g [6]*op2.Global[float64]
	for k, name := range []string{"c1", "c2", "c3", "alpha", "beta", "rms"} {
		if g[k], err = op2.NewGlobal[float64](1, nil, name); err != nil {
			return nil, err
		}
	}
	c1, c2, c3, alpha, beta, rms := g[0], g[1], g[2], g[3], g[4], g[5]
	resCalc := op2.NewKernel(aeroResCalcSrc, "res_calc")
	dirichlet := op2.NewKernel(aeroDirichletSrc, "dirichlet")
	initCG := op2.NewKernel(aeroInitCGSrc, "init_cg")
	spMV := op2.NewKernel(aeroSpMVSrc, "spMV")
	dotPV := op2.NewKernel(aeroDotPVSrc, "dotPV")
	updateUR := op2.NewKernel(aeroUpdateURSrc, "updateUR")
	dotR := op2.NewKernel(aeroDotRSrc, "dotR")
	updateP := op2.NewKernel(aeroUpdatePSrc, "updateP")
	update := op2.NewKernel(aeroUpdateSrc, "update")

	var steps []AeroStep
	for iter := 1; iter <= AeroIters; iter++ {
		if err := op2.ParLoop(resCalc, cells,
			pXm.ArgMap(op2.Read, pcell, 0), pXm.ArgMap(op2.Read, pcell, 1),
			pXm.ArgMap(op2.Read, pcell, 2), pXm.ArgMap(op2.Read, pcell, 3),
			pPhim.ArgMap(op2.Read, pcell, 0), pPhim.ArgMap(op2.Read, pcell, 1),
			pPhim.ArgMap(op2.Read, pcell, 2), pPhim.ArgMap(op2.Read, pcell, 3),
			pK.Arg(op2.Write),
			pResm.ArgMap(op2.Inc, pcell, 0), pResm.ArgMap(op2.Inc, pcell, 1),
			pResm.ArgMap(op2.Inc, pcell, 2), pResm.ArgMap(op2.Inc, pcell, 3)); err != nil {
			return nil, err
		}
		if err := op2.ParLoop(dirichlet, bnodes, pResm.ArgMap(op2.Write, pbnodes, 0)); err != nil {
			return nil, err
		}
		for _, x := range []*op2.Global[float64]{c1, c2, c3, alpha, beta} {
			x.SetValue(0)
		}
		// c1 = R'*R;
		if err := op2.ParLoop(initCG, nodes, pResm.Arg(op2.Read), c1.Arg(op2.Inc),
			pU.Arg(op2.Write), pV.Arg(op2.Write), pP.Arg(op2.Write)); err != nil {
			return nil, err
		}
		v1, err := c1.ValueErr()
		if err != nil {
			return nil, err
		}
		res0 := math.Sqrt(v1)
		res := res0
		inner := 0
		const maxiter = 200
		for res > 0.1*res0 && inner < maxiter {
			// V = Stiffness*P
			if err := op2.ParLoop(spMV, cells,
				pV.ArgMap(op2.Inc, pcell, 0), pV.ArgMap(op2.Inc, pcell, 1),
				pV.ArgMap(op2.Inc, pcell, 2), pV.ArgMap(op2.Inc, pcell, 3),
				pK.Arg(op2.Read),
				pP.ArgMap(op2.Read, pcell, 0), pP.ArgMap(op2.Read, pcell, 1),
				pP.ArgMap(op2.Read, pcell, 2), pP.ArgMap(op2.Read, pcell, 3)); err != nil {
				return nil, err
			}
			if err := op2.ParLoop(dirichlet, bnodes, pV.ArgMap(op2.Write, pbnodes, 0)); err != nil {
				return nil, err
			}
			c2.SetValue(0)
			// c2 = P'*V;
			if err := op2.ParLoop(dotPV, nodes, pP.Arg(op2.Read), pV.Arg(op2.Read), c2.Arg(op2.Inc)); err != nil {
				return nil, err
			}
			v2, err := c2.ValueErr()
			if err != nil {
				return nil, err
			}
			alpha.SetValue(v1 / v2)
			// U = U + alpha*P; resm = resm-alpha*V;
			if err := op2.ParLoop(updateUR, nodes, pU.Arg(op2.Inc), pResm.Arg(op2.Inc),
				pP.Arg(op2.Read), pV.Arg(op2.RW), alpha.Arg(op2.Read)); err != nil {
				return nil, err
			}
			c3.SetValue(0)
			// c3 = resm'*resm;
			if err := op2.ParLoop(dotR, nodes, pResm.Arg(op2.Read), c3.Arg(op2.Inc)); err != nil {
				return nil, err
			}
			v3, err := c3.ValueErr()
			if err != nil {
				return nil, err
			}
			beta.SetValue(v3 / v1)
			// P = beta*P+resm;
			if err := op2.ParLoop(updateP, nodes, pResm.Arg(op2.Read), pP.Arg(op2.RW), beta.Arg(op2.Read)); err != nil {
				return nil, err
			}
			v1 = v3
			res = math.Sqrt(v1)
			inner++
		}
		rms.SetValue(0)
		// phim = phim - Stiffness\Load;
		if err := op2.ParLoop(update, nodes, pPhim.Arg(op2.RW), pResm.Arg(op2.Write),
			pU.Arg(op2.Read), rms.Arg(op2.Inc)); err != nil {
			return nil, err
		}
		r, err := rms.ValueErr()
		if err != nil {
			return nil, err
		}
		steps = append(steps, AeroStep{iter, inner, math.Sqrt(r / float64(nodes.GlobalSize()))})
	}
	return steps, nil
}
