package solver

import (
	"fmt"
	"math"

	"github.com/goop2/op2/internal/petsc"
)

// cgSteps are the bodies of CG's fused loop per norm: x += α p,
// r -= α q, z = M⁻¹ r, and into acc[1] r·z and into acc[0] the square
// of the residual's norm (the natural norm's is r·z itself).
var cgSteps = map[petsc.NormType]struct{ name, body string }{
	petsc.NormUnpreconditioned: {"cgstep", "x[k] += a[0] * p[k]; r[k] += a[1] * q[k]; PRE(z, r) acc[0] += r[k] * r[k]; acc[1] += r[k] * z[k];"},
	petsc.NormPreconditioned:   {"cgstepp", "x[k] += a[0] * p[k]; r[k] += a[1] * q[k]; PRE(z, r) acc[0] += z[k] * z[k]; acc[1] += r[k] * z[k];"},
	petsc.NormNatural:          {"cgstepn", "x[k] += a[0] * p[k]; r[k] += a[1] * q[k]; PRE(z, r) acc[1] += r[k] * z[k];"},
}

// cg is preconditioned conjugate gradients (PETSc's KSPCG), testing
// the residual in info.Norm.
func (k *krylov[V]) cg(x, b V) (Info, error) {
	var r, z, p, q V
	if err := k.work(&r, &z, &p, &q); err != nil {
		return k.info, err
	}
	if done, err := k.begin(x, b, r, q); done || err != nil {
		return k.info, err
	}
	if err := k.precondition(r, z); err != nil {
		return k.info, err
	}
	if err := k.combine(z, 0, z, p); err != nil { // p = z
		return k.info, err
	}
	rz, err := k.inner(r, z)
	if err != nil {
		return k.info, err
	}
	r0 := math.Sqrt(math.Abs(rz)) // natural
	if k.info.Norm != petsc.NormNatural {
		v := r // unpreconditioned
		if k.info.Norm == petsc.NormPreconditioned {
			v = z
		}
		vv, err := k.inner(v, v)
		if err != nil {
			return k.info, err
		}
		r0 = math.Sqrt(vv)
	}
	if err := k.setTolerance(r0, b, false); err != nil {
		return k.info, err
	}
	step := cgSteps[k.info.Norm]
	for k.more() {
		// q = A p; α = (r·z)/(p·q); then one loop: x += α p, r -= α q,
		// z = M⁻¹ r and the products r·z and the norm's.
		if err := k.ops.Mult(p, q); err != nil {
			return k.info, err
		}
		pq, err := k.inner(p, q)
		if err != nil {
			return k.info, err
		}
		if !isFinite(pq) {
			return k.info, fmt.Errorf("%w; the matrix or a vector holds a NaN or infinity, or the iteration diverged", k.breakdown("conjugate gradients", "p·Ap", pq))
		}
		if !(pq > 0) {
			return k.info, fmt.Errorf("%w; the matrix is not symmetric positive definite", k.breakdown("conjugate gradients", "p·Ap", pq))
		}
		alpha := rz / pq
		// z is r without a preconditioner.
		zr := z
		if !k.jacobi {
			zr = r
		}
		dots, err := k.vecLoop(step.name, []float64{alpha, -alpha}, step.body,
			[]Vec[V]{{"p", p, Read}, {"q", q, Read}, {"x", x, RW}, {"r", r, RW}, {"z", zr, Write}})
		if err != nil {
			return k.info, err
		}
		rzNew := dots[1]
		k.info.Iterations++
		if k.info.Norm == petsc.NormNatural {
			k.info.Residual = math.Sqrt(math.Abs(rzNew))
		} else {
			k.info.Residual = math.Sqrt(dots[0])
		}
		// β = (r·z)new/(r·z)old; p = z + β p.
		if err := k.combine(zr, rzNew/rz, p, p); err != nil {
			return k.info, err
		}
		rz = rzNew
	}
	return k.info, k.err
}

// bicgstab is BiCGStab (PETSc's KSPBCGS): preconditioned on the left
// (B A x = B b, whose residual is B r) for the preconditioned norm, on
// the right (A B y = b, x = B y) for the unpreconditioned one.
func (k *krylov[V]) bicgstab(x, b V) (Info, error) {
	left := k.jacobi && k.info.Norm == petsc.NormPreconditioned
	var r, r0, p, v, y, sv, z, t V
	if err := k.work(&r, &r0, &p, &v, &y, &sv, &z, &t); err != nil {
		return k.info, err
	}
	if done, err := k.begin(x, b, r, v); done || err != nil {
		return k.info, err
	}
	if left { // r = B r (z is free: left preconditioning needs none)
		if err := k.precondition(r, z); err != nil {
			return k.info, err
		}
		r, z = z, r
	}
	rr, err := k.inner(r, r)
	if err != nil {
		return k.info, err
	}
	if err := k.setTolerance(math.Sqrt(rr), b, !left); err != nil {
		return k.info, err
	}
	if err := k.combine(r, 0, r, r0); err != nil { // r̂ = r
		return k.info, err
	}
	if err := k.combine(r, 0, r, p); err != nil { // p = r
		return k.info, err
	}
	rho, err := k.inner(r0, r)
	if err != nil {
		return k.info, err
	}
	// Left: y is the work vector of the products A p and A s, and the
	// iterates' updates are p and s themselves.
	q, rname := y, "bicgr"
	if left {
		y, z, rname = p, sv, "bicgrl"
	}
	for k.more() {
		if rho == 0 {
			return k.info, k.breakdown("BiCGStab", "r̂·r", rho)
		}
		// v = A M⁻¹ p (right) or M⁻¹ A p (left); α = ρ/(r̂·v).
		var r0v float64
		if left {
			if err := k.ops.Mult(p, q); err != nil {
				return k.info, err
			}
			dots, err := k.vecLoop("bicglv", nil, "PRE(v, q) acc[0] += r0[k] * v[k];", []Vec[V]{{"q", q, Read}, {"r0", r0, Read}, {"v", v, Write}})
			if err != nil {
				return k.info, err
			}
			r0v = dots[0]
		} else {
			if err := k.precondition(p, y); err != nil {
				return k.info, err
			}
			if err := k.ops.Mult(y, v); err != nil {
				return k.info, err
			}
			if r0v, err = k.inner(r0, v); err != nil {
				return k.info, err
			}
		}
		if r0v == 0 {
			return k.info, k.breakdown("BiCGStab", "r̂·Av", r0v)
		}
		alpha := rho / r0v
		// One loop: s = r - α v, x += α y, (right) z = M⁻¹ s (z is s
		// without a preconditioner) and s·s.
		var ss []float64
		if left {
			ss, err = k.vecLoop("bicgls", []float64{alpha, -alpha}, "s[k] = r[k] + a[1] * v[k]; x[k] += a[0] * p[k]; acc[0] += s[k] * s[k];",
				[]Vec[V]{{"r", r, Read}, {"v", v, Read}, {"p", p, Read}, {"x", x, RW}, {"s", sv, Write}})
		} else {
			if !k.jacobi {
				z = sv
			}
			ss, err = k.vecLoop("bicgs", []float64{alpha, -alpha}, "s[k] = r[k] + a[1] * v[k]; x[k] += a[0] * y[k]; PRE(z, s) acc[0] += s[k] * s[k];",
				[]Vec[V]{{"r", r, Read}, {"v", v, Read}, {"y", y, Read}, {"x", x, RW}, {"s", sv, Write}, {"z", z, Write}})
		}
		if err != nil {
			return k.info, err
		}
		k.info.Iterations++
		if k.info.Residual = math.Sqrt(ss[0]); k.info.Residual <= k.tol {
			k.more()
			break
		}
		// t = A z (right) or M⁻¹ A s (left); ω = (t·s)/(t·t) (one loop
		// for both products).
		var dots []float64
		if left {
			if err := k.ops.Mult(sv, q); err != nil {
				return k.info, err
			}
			dots, err = k.vecLoop("bicglt", nil, "PRE(t, q) acc[0] += t[k] * s[k]; acc[1] += t[k] * t[k];", []Vec[V]{{"q", q, Read}, {"s", sv, Read}, {"t", t, Write}})
		} else {
			if err := k.ops.Mult(z, t); err != nil {
				return k.info, err
			}
			dots, err = k.vecLoop("bicgt", nil, "acc[0] += t[k] * s[k]; acc[1] += t[k] * t[k];", []Vec[V]{{"t", t, Read}, {"s", sv, Read}})
		}
		if err != nil {
			return k.info, err
		}
		ts, tt := dots[0], dots[1]
		if tt == 0 || ts == 0 {
			return k.info, k.breakdown("BiCGStab", "t·s", ts)
		}
		omega := ts / tt
		// One loop: x += ω z, r = s - ω t, r·r and r̂·r.
		dots, err = k.vecLoop(rname, []float64{omega, -omega}, "x[k] += a[0] * z[k]; r[k] = s[k] + a[1] * t[k]; acc[0] += r[k] * r[k]; acc[1] += r0[k] * r[k];",
			[]Vec[V]{{"z", z, Read}, {"s", sv, Read}, {"t", t, Read}, {"r0", r0, Read}, {"x", x, RW}, {"r", r, Write}})
		if err != nil {
			return k.info, err
		}
		k.info.Residual = math.Sqrt(dots[0])
		rhoNew := dots[1]
		// β = (ρnew/ρ)(α/ω); p = r + β (p - ω v), in one loop.
		beta := rhoNew / rho * alpha / omega
		if _, err := k.vecLoop("bicgp", []float64{-omega, beta}, "p[k] += a[0] * v[k]; p[k] = r[k] + a[1] * p[k];",
			[]Vec[V]{{"v", v, Read}, {"r", r, Read}, {"p", p, RW}}); err != nil {
			return k.info, err
		}
		rho = rhoNew
	}
	return k.info, k.err
}
