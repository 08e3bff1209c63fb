package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	opexec "github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/poisson"
)

// petscLibrary is the PETSc library the comparison loads: Debian's
// libpetsc-real3.18 (32-bit indices, double values), or
// $OP2_PETSC_LIBRARY.
func petscLibrary() string {
	if v := os.Getenv("OP2_PETSC_LIBRARY"); v != "" {
		return v
	}
	return "libpetsc_real.so.3.18"
}

// petscMain is the C program that assembles the P1 stiffness matrix
// with PETSc, the way a C code using PETSc does it: a SeqAIJ matrix
// preallocated with each row's exact number of nonzeros, new nonzeros
// refused (MAT_NEW_NONZERO_ALLOCATION_ERR), and per triangle the
// element kernel (GoOP2's own, compiled in before this text) and one
// MatSetValues(ADD_VALUES) of its 3×3 matrix; the timed assembly is the
// loop over the triangles and MatAssemblyBegin/End. It declares the
// few PETSc functions it calls itself and loads PETSc with dlopen, so
// it needs no PETSc headers (Debian's runtime package is enough).
//
// It reads the mesh from argv[2] (little-endian: int64 nodes, int64
// triangles; then 2 doubles per node, an int32 boundary flag per node,
// 3 int32 nodes per triangle, an int32 nonzero count per row), makes
// argv[3] assemblies (the matrix zeroed, untimed, before each but the
// first), and prints one line per assembly ("assembly I SECONDS"), then
// the matrix's used nonzeros and the mallocs PETSc made during
// assembly (MatGetInfo) and its Frobenius norm. Then, as cmd/poisson
// does, it zeroes the boundary nodes' rows and columns with 1 on the
// diagonal (MatZeroRowsColumns) and times PETSc's conjugate gradients
// with a Jacobi preconditioner (KSPCG, PCJACOBI, set up beforehand)
// for argv[4] and then argv[5] iterations from x = 0 (the tolerances out
// of reach), printing "cg ITERATIONS SECONDS" for each. It exits with
// status 3, saying why, when the library cannot be loaded.
const petscMain = `
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int op2b_err;          /* PetscErrorCode */
typedef int op2b_int;          /* PetscInt (32-bit in libpetsc_real) */
typedef struct op2b_mat *op2b_mat;
typedef struct op2b_vec *op2b_vec;
typedef struct op2b_ksp *op2b_ksp;
typedef struct op2b_pc *op2b_pc;
typedef void *op2b_comm;       /* MPI_Comm (Open MPI: a pointer) */

static double op2b_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void *op2b_sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p) {
    fprintf(stderr, "petsc: no symbol %s: %s\n", name, dlerror());
    exit(2);
  }
  return p;
}

#define OP2B_CHECK(call) do { op2b_err e_ = (call); if (e_) { fprintf(stderr, "petsc: %s failed: error %d\n", #call, e_); exit(2); } } while (0)

static void op2b_read(FILE *f, void *p, size_t size, size_t n) {
  if (fread(p, size, n, f) != n) {
    fprintf(stderr, "petsc: short mesh file\n");
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s LIBRARY MESHFILE ASSEMBLIES CG-ITERATIONS CG-ITERATIONS\n", argv[0]);
    return 2;
  }
  /* Open MPI's hwloc would load the OpenCL drivers (PoCL) at MPI_Init. */
  setenv("HWLOC_COMPONENTS", "-opencl", 1);
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    printf("missing %s\n", dlerror());
    return 3;
  }
  op2b_err (*options_set)(void *, const char *, const char *) = op2b_sym(h, "PetscOptionsSetValue");
  op2b_err (*init)(void) = op2b_sym(h, "PetscInitializeNoArguments");
  op2b_err (*finalize)(void) = op2b_sym(h, "PetscFinalize");
  op2b_err (*create)(op2b_comm, op2b_int, op2b_int, op2b_int, const op2b_int *, op2b_mat *) = op2b_sym(h, "MatCreateSeqAIJ");
  op2b_err (*set_option)(op2b_mat, int, int) = op2b_sym(h, "MatSetOption");
  op2b_err (*set_values)(op2b_mat, op2b_int, const op2b_int *, op2b_int, const op2b_int *, const double *, int) = op2b_sym(h, "MatSetValues");
  op2b_err (*begin)(op2b_mat, int) = op2b_sym(h, "MatAssemblyBegin");
  op2b_err (*end)(op2b_mat, int) = op2b_sym(h, "MatAssemblyEnd");
  op2b_err (*zero)(op2b_mat) = op2b_sym(h, "MatZeroEntries");
  op2b_err (*get_info)(op2b_mat, int, double *) = op2b_sym(h, "MatGetInfo");
  op2b_err (*norm)(op2b_mat, int, double *) = op2b_sym(h, "MatNorm");
  op2b_err (*destroy)(op2b_mat *) = op2b_sym(h, "MatDestroy");
  op2b_err (*zero_rows_columns)(op2b_mat, op2b_int, const op2b_int *, double, op2b_vec, op2b_vec) = op2b_sym(h, "MatZeroRowsColumns");
  op2b_err (*create_vecs)(op2b_mat, op2b_vec *, op2b_vec *) = op2b_sym(h, "MatCreateVecs");
  op2b_err (*vec_set)(op2b_vec, double) = op2b_sym(h, "VecSet");
  op2b_err (*vec_destroy)(op2b_vec *) = op2b_sym(h, "VecDestroy");
  op2b_err (*ksp_create)(op2b_comm, op2b_ksp *) = op2b_sym(h, "KSPCreate");
  op2b_err (*ksp_operators)(op2b_ksp, op2b_mat, op2b_mat) = op2b_sym(h, "KSPSetOperators");
  op2b_err (*ksp_type)(op2b_ksp, const char *) = op2b_sym(h, "KSPSetType");
  op2b_err (*ksp_pc)(op2b_ksp, op2b_pc *) = op2b_sym(h, "KSPGetPC");
  op2b_err (*pc_type)(op2b_pc, const char *) = op2b_sym(h, "PCSetType");
  op2b_err (*ksp_tolerances)(op2b_ksp, double, double, double, op2b_int) = op2b_sym(h, "KSPSetTolerances");
  op2b_err (*ksp_setup)(op2b_ksp) = op2b_sym(h, "KSPSetUp");
  op2b_err (*ksp_solve)(op2b_ksp, op2b_vec, op2b_vec) = op2b_sym(h, "KSPSolve");
  op2b_err (*ksp_its)(op2b_ksp, op2b_int *) = op2b_sym(h, "KSPGetIterationNumber");
  op2b_err (*ksp_destroy)(op2b_ksp *) = op2b_sym(h, "KSPDestroy");
  /* MatOption values by name, from PETSc's own table of their names
     (MatOptions[i] names option i), rather than from a header. */
  const char *const *names = *(const char *const *const *)op2b_sym(h, "MatOptions");
  int alloc_err = -1;
  for (int i = 0; i < 64 && names[i]; i++)
    if (strcmp(names[i], "NEW_NONZERO_ALLOCATION_ERR") == 0) alloc_err = i;
  if (alloc_err < 0) {
    fprintf(stderr, "petsc: MAT_NEW_NONZERO_ALLOCATION_ERR not found in MatOptions\n");
    return 2;
  }
  const int add_values = 2, final_assembly = 0, mat_local = 1, norm_frobenius = 2;
  op2b_comm self = op2b_sym(h, "ompi_mpi_comm_self"); /* MPI_COMM_SELF */

  FILE *f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 2;
  }
  int64_t hdr[2];
  op2b_read(f, hdr, sizeof hdr[0], 2);
  const int64_t nn = hdr[0], nt = hdr[1];
  double *x = malloc(sizeof(double) * 2 * nn);
  int *bnd = malloc(sizeof(int) * nn), *tri = malloc(sizeof(int) * 3 * nt), *nnz = malloc(sizeof(int) * nn);
  if (!x || !bnd || !tri || !nnz) {
    fprintf(stderr, "petsc: out of memory\n");
    return 2;
  }
  op2b_read(f, x, sizeof(double), 2 * nn);
  op2b_read(f, bnd, sizeof(int), nn);
  op2b_read(f, tri, sizeof(int), 3 * nt);
  op2b_read(f, nnz, sizeof(int), nn);
  fclose(f);
  const int assemblies = atoi(argv[3]);

  OP2B_CHECK(options_set(NULL, "-no_signal_handler", NULL));
  OP2B_CHECK(init());
  op2b_mat A;
  OP2B_CHECK(create(self, (op2b_int)nn, (op2b_int)nn, 0, nnz, &A));
  OP2B_CHECK(set_option(A, alloc_err, 1));
  for (int a = 0; a < assemblies; a++) {
    if (a > 0) OP2B_CHECK(zero(A));
    const double t0 = op2b_now();
    for (int64_t t = 0; t < nt; t++) {
      const int *v = tri + 3 * t;
      const double *xp[3] = {x + 2 * v[0], x + 2 * v[1], x + 2 * v[2]};
      double K[9] = {0};
      stiffness(xp, K);
      OP2B_CHECK(set_values(A, 3, v, 3, v, K, add_values));
    }
    OP2B_CHECK(begin(A, final_assembly));
    OP2B_CHECK(end(A, final_assembly));
    printf("assembly %d %.9f\n", a, op2b_now() - t0);
  }
  double info[10], frob;
  OP2B_CHECK(get_info(A, mat_local, info));
  OP2B_CHECK(norm(A, norm_frobenius, &frob));
  printf("nonzeros %.0f\nmallocs %.0f\nfrobenius %.17g\n", info[2], info[6], frob);

  int nb = 0;
  for (int64_t i = 0; i < nn; i++)
    if (bnd[i]) nnz[nb++] = (int)i; /* nnz is free now */
  OP2B_CHECK(zero_rows_columns(A, nb, nnz, 1.0, NULL, NULL));
  op2b_vec xv, bv;
  OP2B_CHECK(create_vecs(A, &xv, &bv));
  OP2B_CHECK(vec_set(bv, 1.0));
  op2b_ksp ksp;
  op2b_pc pc;
  OP2B_CHECK(ksp_create(self, &ksp));
  OP2B_CHECK(ksp_operators(ksp, A, A));
  OP2B_CHECK(ksp_type(ksp, "cg"));
  OP2B_CHECK(ksp_pc(ksp, &pc));
  OP2B_CHECK(pc_type(pc, "jacobi"));
  OP2B_CHECK(ksp_setup(ksp));
  /* A 2-iteration warm-up, then the short and long solves twice each. */
  const int runs[5] = {2, atoi(argv[4]), atoi(argv[5]), atoi(argv[4]), atoi(argv[5])};
  for (int c = 0; c < 5; c++) {
    const int its = runs[c];
    OP2B_CHECK(ksp_tolerances(ksp, 1e-300, 1e-300, 1e300, its));
    OP2B_CHECK(vec_set(xv, 0.0));
    const double t0 = op2b_now();
    OP2B_CHECK(ksp_solve(ksp, bv, xv));
    const double t = op2b_now() - t0;
    op2b_int done;
    OP2B_CHECK(ksp_its(ksp, &done));
    if (c > 0) printf("cg %d %.9f\n", (int)done, t);
  }
  OP2B_CHECK(ksp_destroy(&ksp));
  OP2B_CHECK(vec_destroy(&xv));
  OP2B_CHECK(vec_destroy(&bv));
  OP2B_CHECK(destroy(&A));
  OP2B_CHECK(finalize());
  return 0;
}
`

// errNoPETSc says that the PETSc library could not be loaded.
var errNoPETSc = errors.New("PETSc not found")

// petscBench is the compiled PETSc assembly program and its mesh file.
type petscBench struct {
	prog, meshFile string
}

// newPETScBench writes mesh m (with each row's nonzero count, from
// rowptr) into dir and compiles the PETSc assembly program there with
// problem p's kernels, by $CC (else cc) with GoOP2's default flags.
func newPETScBench(dir string, m *poisson.Mesh, rowptr []int32, p poisson.Problem) (*petscBench, error) {
	var buf bytes.Buffer
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	w([]int64{int64(m.Nodes), int64(len(m.Tri) / 3)})
	w(m.X)
	w(m.Boundary)
	w(m.Tri)
	nnz := make([]int32, m.Nodes)
	for i := range nnz {
		nnz[i] = rowptr[i+1] - rowptr[i]
	}
	w(nnz)
	b := &petscBench{prog: filepath.Join(dir, "petsc-assemble"), meshFile: filepath.Join(dir, "mesh.bin")}
	if err := os.WriteFile(b.meshFile, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	src := filepath.Join(dir, "petsc-assemble.c")
	if err := os.WriteFile(src, []byte("#include <math.h>\n"+poisson.KernelSource(p)+petscMain), 0o644); err != nil {
		return nil, err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	args := append(append([]string(nil), opexec.DefaultCFlags...), "-o", b.prog, src, "-lm", "-ldl")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("compiling the PETSc assembly program: %v\n%s", err, out)
	}
	return b, nil
}

// petscRun is what one run of the PETSc program measured.
type petscRun struct {
	seconds           []float64 // per assembly; the first into the new matrix
	nonzeros, mallocs float64
	frobenius         float64
	cgIts             []int     // the CG solves' iterations: short, long, short, long
	cgSeconds         []float64 // and their times
}

// cgIteration is the seconds of one CG iteration: the difference
// between the faster long and the faster short solve over the
// difference of their iterations.
func (r *petscRun) cgIteration() float64 {
	return (min(r.cgSeconds[1], r.cgSeconds[3]) - min(r.cgSeconds[0], r.cgSeconds[2])) / float64(r.cgIts[1]-r.cgIts[0])
}

// run runs the program for n assemblies and CG solves of short and long
// iterations; errNoPETSc when the library is missing.
func (b *petscBench) run(n, short, long int) (*petscRun, error) {
	cmd := exec.Command(b.prog, petscLibrary(), b.meshFile, strconv.Itoa(n), strconv.Itoa(short), strconv.Itoa(long))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
		return nil, fmt.Errorf("%w: %s", errNoPETSc, strings.TrimSpace(string(out)))
	}
	if err != nil {
		return nil, fmt.Errorf("the PETSc assembly program: %v\n%s", err, stderr.String())
	}
	r := &petscRun{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "cg" {
			its, err1 := strconv.Atoi(f[1])
			secs, err2 := strconv.ParseFloat(f[2], 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("the PETSc assembly program printed %q", sc.Text())
			}
			r.cgIts, r.cgSeconds = append(r.cgIts, its), append(r.cgSeconds, secs)
			continue
		}
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("the PETSc assembly program printed %q", sc.Text())
		}
		switch f[0] {
		case "assembly":
			r.seconds = append(r.seconds, v)
		case "nonzeros":
			r.nonzeros = v
		case "mallocs":
			r.mallocs = v
		case "frobenius":
			r.frobenius = v
		}
	}
	if len(r.seconds) != n {
		return nil, fmt.Errorf("the PETSc assembly program printed %d assembly times, want %d:\n%s", len(r.seconds), n, out)
	}
	if len(r.cgIts) != 4 || r.cgIts[0] != short || r.cgIts[1] != long || r.cgIts[2] != short || r.cgIts[3] != long {
		return nil, fmt.Errorf("the PETSc program's CG solves made %v iterations, want %d and %d:\n%s", r.cgIts, short, long, out)
	}
	return r, nil
}
