package petsc

import (
	"fmt"
	"strings"
)

// symbols are the PETSc functions (and two variables) the shim uses, in
// the order of the function table load fills and the shim indexes
// (shimSource numbers them).
var symbols = []string{
	"PetscDataTypeGetSize",
	"PetscGetVersion",
	"PetscOptionsSetValue",
	"PetscInitializeNoArguments",
	"PetscFinalize",
	"PetscPushErrorHandler",
	"PetscReturnErrorHandler",
	"PetscErrorMessage",
	"PetscOptionsPrefixPush",
	"PetscOptionsPrefixPop",
	"PetscOptionsInsertString",
	"PetscOptionsClearValue",
	"PetscOptionsLeftGet",
	"PetscOptionsLeftRestore",
	"PETSC_COMM_WORLD",
	"KSPConvergedReasons",
	"MatCreate",
	"MatSetSizes",
	"MatSetBlockSize",
	"MatSetOptionsPrefix",
	"MatSetType",
	"MatSetFromOptions",
	"MatXAIJSetPreallocation",
	"MatSetValues",
	"MatAssemblyBegin",
	"MatAssemblyEnd",
	"MatGetInfo",
	"MatGetType",
	"MatDestroy",
	"VecCreateSeq",
	"VecCreateMPIWithArray",
	"VecGetArray",
	"VecRestoreArray",
	"VecNorm",
	"VecPlaceArray",
	"VecResetArray",
	"VecDestroy",
	"KSPCreate",
	"KSPSetOptionsPrefix",
	"KSPSetType",
	"KSPGetPC",
	"PCSetType",
	"KSPSetTolerances",
	"KSPSetInitialGuessNonzero",
	"KSPSetNormType",
	"KSPGetNormType",
	"KSPSetFromOptions",
	"KSPSetOperators",
	"KSPSolve",
	"KSPGetIterationNumber",
	"KSPGetResidualNorm",
	"KSPGetConvergedReason",
	"KSPGetType",
	"PCGetType",
	"KSPDestroy",
}

// symbolIndex returns the index of name in symbols.
func symbolIndex(name string) int {
	for i, s := range symbols {
		if s == name {
			return i
		}
	}
	panic("petsc: no symbol " + name)
}

// shimVersion changes whenever the shim's entry points change.
const shimVersion = 4

// Values of PETSc's enums the shim passes, the same from 3.18 on (PETSc's
// own headers: petscsystypes.h, petscmat.h, petscvec.h).
const (
	petscInt         = 16 // PetscDataType PETSC_INT
	insertValues     = 1  // InsertMode INSERT_VALUES
	matFinalAssembly = 0  // MatAssemblyType MAT_FINAL_ASSEMBLY
	matLocal         = 1  // MatInfoType MAT_LOCAL
	norm1            = 0  // NormType NORM_1
)

// shimSource returns the C shim for a PETSc whose PetscInt is intBytes
// wide. It is compiled with the MPI compiler wrapper, for MPI_Comm, and
// declares the prototypes it needs itself (PETSc's objects are opaque
// pointers, PetscScalar and PetscReal double: load refuses other builds),
// so that no PETSc header is needed.
func shimSource(intBytes int) string {
	var idx strings.Builder
	for i, s := range symbols {
		fmt.Fprintf(&idx, "#define I_%s %d\n", s, i)
	}
	return fmt.Sprintf(`#include <mpi.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXPORT __attribute__((visibility("default")))
#define OP2PETSC_VERSION %d

typedef int%d_t PetscInt;
typedef int PetscErrorCode;
typedef int PetscBool;
typedef double PetscScalar;
typedef double PetscReal;
typedef struct _p_Mat *Mat;
typedef struct _p_Vec *Vec;
typedef struct _p_KSP *KSP;
typedef struct _p_PC *PC;
typedef struct _n_PetscOptions *PetscOptions;
typedef PetscErrorCode (*ErrorHandler)(MPI_Comm, int, const char *, const char *, PetscErrorCode, int, const char *, void *);

/* Enum values (identical in PETSc 3.18 and later). */
#define INSERT_VALUES %d
#define MAT_FINAL_ASSEMBLY %d
#define MAT_LOCAL %d
#define NORM_1 %d

%s
/* The prototypes of PETSc (petsc*.h), as function pointer types. */
typedef PetscErrorCode (*PetscGetVersion_fn)(char *, size_t);
typedef PetscErrorCode (*PetscOptionsSetValue_fn)(PetscOptions, const char *, const char *);
typedef PetscErrorCode (*PetscInitializeNoArguments_fn)(void);
typedef PetscErrorCode (*PetscFinalize_fn)(void);
typedef PetscErrorCode (*PetscPushErrorHandler_fn)(ErrorHandler, void *);
typedef PetscErrorCode (*PetscErrorMessage_fn)(int, const char **, char **);
typedef PetscErrorCode (*PetscOptionsPrefixPush_fn)(PetscOptions, const char *);
typedef PetscErrorCode (*PetscOptionsPrefixPop_fn)(PetscOptions);
typedef PetscErrorCode (*PetscOptionsInsertString_fn)(PetscOptions, const char *);
typedef PetscErrorCode (*PetscOptionsClearValue_fn)(PetscOptions, const char *);
typedef PetscErrorCode (*PetscOptionsLeftGet_fn)(PetscOptions, PetscInt *, char ***, char ***);
typedef PetscErrorCode (*PetscOptionsLeftRestore_fn)(PetscOptions, PetscInt *, char ***, char ***);
typedef PetscErrorCode (*MatCreate_fn)(MPI_Comm, Mat *);
typedef PetscErrorCode (*MatSetSizes_fn)(Mat, PetscInt, PetscInt, PetscInt, PetscInt);
typedef PetscErrorCode (*MatSetBlockSize_fn)(Mat, PetscInt);
typedef PetscErrorCode (*MatSetOptionsPrefix_fn)(Mat, const char *);
typedef PetscErrorCode (*MatSetType_fn)(Mat, const char *);
typedef PetscErrorCode (*MatSetFromOptions_fn)(Mat);
typedef PetscErrorCode (*MatXAIJSetPreallocation_fn)(Mat, PetscInt, const PetscInt *, const PetscInt *, const PetscInt *, const PetscInt *);
typedef PetscErrorCode (*MatSetValues_fn)(Mat, PetscInt, const PetscInt *, PetscInt, const PetscInt *, const PetscScalar *, int);
typedef PetscErrorCode (*MatAssemblyBegin_fn)(Mat, int);
typedef PetscErrorCode (*MatAssemblyEnd_fn)(Mat, int);
typedef PetscErrorCode (*MatGetInfo_fn)(Mat, int, double *);
typedef PetscErrorCode (*MatGetType_fn)(Mat, const char **);
typedef PetscErrorCode (*MatDestroy_fn)(Mat *);
typedef PetscErrorCode (*VecCreateSeq_fn)(MPI_Comm, PetscInt, Vec *);
typedef PetscErrorCode (*VecCreateMPIWithArray_fn)(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscScalar *, Vec *);
typedef PetscErrorCode (*VecGetArray_fn)(Vec, PetscScalar **);
typedef PetscErrorCode (*VecRestoreArray_fn)(Vec, PetscScalar **);
typedef PetscErrorCode (*VecNorm_fn)(Vec, int, PetscReal *);
typedef PetscErrorCode (*VecPlaceArray_fn)(Vec, const PetscScalar *);
typedef PetscErrorCode (*VecResetArray_fn)(Vec);
typedef PetscErrorCode (*VecDestroy_fn)(Vec *);
typedef PetscErrorCode (*KSPCreate_fn)(MPI_Comm, KSP *);
typedef PetscErrorCode (*KSPSetOptionsPrefix_fn)(KSP, const char *);
typedef PetscErrorCode (*KSPSetType_fn)(KSP, const char *);
typedef PetscErrorCode (*KSPGetPC_fn)(KSP, PC *);
typedef PetscErrorCode (*PCSetType_fn)(PC, const char *);
typedef PetscErrorCode (*KSPSetTolerances_fn)(KSP, PetscReal, PetscReal, PetscReal, PetscInt);
typedef PetscErrorCode (*KSPSetInitialGuessNonzero_fn)(KSP, PetscBool);
typedef PetscErrorCode (*KSPSetNormType_fn)(KSP, int);
typedef PetscErrorCode (*KSPGetNormType_fn)(KSP, int *);
typedef PetscErrorCode (*KSPSetFromOptions_fn)(KSP);
typedef PetscErrorCode (*KSPSetOperators_fn)(KSP, Mat, Mat);
typedef PetscErrorCode (*KSPSolve_fn)(KSP, Vec, Vec);
typedef PetscErrorCode (*KSPGetIterationNumber_fn)(KSP, PetscInt *);
typedef PetscErrorCode (*KSPGetResidualNorm_fn)(KSP, PetscReal *);
typedef PetscErrorCode (*KSPGetConvergedReason_fn)(KSP, int *);
typedef PetscErrorCode (*KSPGetType_fn)(KSP, const char **);
typedef PetscErrorCode (*PCGetType_fn)(PC, const char **);
typedef PetscErrorCode (*KSPDestroy_fn)(KSP *);

static void *const *fn;
#define F(name) ((name##_fn)fn[I_##name])
#define COMM (*(MPI_Comm *)fn[I_PETSC_COMM_WORLD])
/* TRY calls a PETSc function; on an error it records which failed and
   leaves through out. */
#define TRY(name, ...) do { if ((rc = F(name)(__VA_ARGS__)) != 0) { *failed = I_##name; goto out; } } while (0)

EXPORT int op2petsc_version(void) { return OP2PETSC_VERSION; }

/* op2petsc_init initialises PETSc on MPI_COMM_WORLD (MPI is initialised
   already): without signal handlers, with an error handler that returns
   the error code without printing. It then checks that PetscScalar is a
   real double: the 1-norm of the vector (1, 2, 3, 4) written as doubles
   is 10 only then. It returns 0, a PETSc error code with *failed set, or
   -1 (with *failed -1) when the build is not real double precision. */
EXPORT int op2petsc_init(void *const *table, int *failed) {
	int rc = 0;
	Vec v = NULL;
	PetscScalar *a = NULL;
	PetscReal norm = 0;
	fn = table;
	TRY(PetscOptionsSetValue, NULL, "-no_signal_handler", NULL);
	TRY(PetscOptionsSetValue, NULL, "-options_left", "0");
	if ((rc = F(PetscInitializeNoArguments)()) != 0) { *failed = I_PetscInitializeNoArguments; goto out; }
	TRY(PetscPushErrorHandler, (ErrorHandler)fn[I_PetscReturnErrorHandler], NULL);
	/* 8 values: room for the 32 bytes written whatever PetscScalar is. */
	TRY(VecCreateSeq, MPI_COMM_SELF, 8, &v);
	TRY(VecGetArray, v, &a);
	double one[4] = {1, 2, 3, 4};
	memcpy(a, one, sizeof one);
	TRY(VecRestoreArray, v, &a);
	TRY(VecNorm, v, NORM_1, &norm);
	if (norm != 10) {
		*failed = -1;
		rc = -1;
	}
out:
	if (v) F(VecDestroy)(&v);
	return rc;
}

EXPORT int op2petsc_finalize(void) { return F(PetscFinalize)(); }

/* op2petsc_error writes the message of PETSc error code rc (the message
   of the error that started it, when PETSc kept it) into buf. */
EXPORT void op2petsc_error(int rc, char *buf, int n) {
	const char *text = NULL;
	char *specific = NULL;
	buf[0] = 0;
	if (F(PetscErrorMessage)(rc, &text, &specific) != 0) return;
	if (specific && specific[0] && text && text[0])
		snprintf(buf, n, "%%s (%%s)", specific, text);
	else if (specific && specific[0])
		snprintf(buf, n, "%%s", specific);
	else if (text)
		snprintf(buf, n, "%%s", text);
}

/* op2petsc_clear removes option name ("-op2_1_ksp_type") from the
   options database, if there. */
EXPORT int op2petsc_clear(const char *name, int *failed) {
	int rc = 0;
	TRY(PetscOptionsClearValue, NULL, name);
out:
	return rc;
}

/* op2petsc_left writes into buf (n bytes, cut at a whole name) the
   names of the options under prefix that no object has looked up,
   without the prefix ("-ksp_typ"), separated by blanks: those the
   solver's options inserted, and those a file they named
   (-options_file) did. The database keeps names without the "-" and
   compares them ignoring case. */
EXPORT int op2petsc_left(const char *prefix, char *buf, int n, int *failed) {
	int rc = 0;
	PetscInt N = 0;
	char **names = NULL, **values = NULL;
	size_t lp = strlen(prefix), used = 0;
	buf[0] = 0;
	TRY(PetscOptionsLeftGet, NULL, &N, &names, &values);
	for (PetscInt i = 0; i < N; i++) {
		if (strncasecmp(names[i], prefix, lp) != 0) continue;
		int w = snprintf(buf + used, (size_t)n - used, "%%s-%%s", used ? " " : "", names[i] + lp);
		if (w < 0 || (size_t)w >= (size_t)n - used) {
			buf[used] = 0;
			break;
		}
		used += (size_t)w;
	}
	TRY(PetscOptionsLeftRestore, NULL, &N, &names, &values);
out:
	return rc;
}

/* op2petsc_options inserts options (PETSc's command-line syntax) into
   the options database, each name under prefix. */
EXPORT int op2petsc_options(const char *prefix, const char *options, int *failed) {
	int rc = 0, pushed = 0;
	TRY(PetscOptionsPrefixPush, NULL, prefix);
	pushed = 1;
	TRY(PetscOptionsInsertString, NULL, options);
out:
	if (pushed) {
		int prc = F(PetscOptionsPrefixPop)(NULL);
		if (rc == 0 && prc != 0) { rc = prc; *failed = I_PetscOptionsPrefixPop; }
	}
	return rc;
}

/* op2petsc_mat_create creates the matrix of this rank's n block rows
   (bs×bs blocks) of a square matrix of N block rows in all, whose
   pattern is rowptr/colidx (local block columns: those below n are this
   rank's own rows, in order; the others halo elements), with the options
   under prefix (its type, AIJ unless they say otherwise) and exact
   preallocation. */
EXPORT int op2petsc_mat_create(const char *prefix, long long n, long long N, int bs, const int32_t *rowptr,
		const int32_t *colidx, Mat *out, int *failed) {
	int rc = 0;
	Mat A = NULL;
	PetscInt *dnnz = malloc(((size_t)n + 1) * sizeof(PetscInt)), *onnz = malloc(((size_t)n + 1) * sizeof(PetscInt));
	*out = NULL;
	if (!dnnz || !onnz) { rc = -2; *failed = -1; goto out; }
	for (long long r = 0; r < n; r++) {
		dnnz[r] = onnz[r] = 0;
		for (int32_t k = rowptr[r]; k < rowptr[r + 1]; k++) {
			if (colidx[k] < n) dnnz[r]++;
			else onnz[r]++;
		}
	}
	TRY(MatCreate, COMM, &A);
	TRY(MatSetSizes, A, (PetscInt)(n * bs), (PetscInt)(n * bs), (PetscInt)(N * bs), (PetscInt)(N * bs));
	TRY(MatSetBlockSize, A, bs);
	TRY(MatSetOptionsPrefix, A, prefix);
	TRY(MatSetType, A, "aij");
	TRY(MatSetFromOptions, A);
	TRY(MatXAIJSetPreallocation, A, bs, dnnz, onnz, NULL, NULL);
	*out = A;
	A = NULL;
out:
	if (A) F(MatDestroy)(&A);
	free(dnnz);
	free(onnz);
	return rc;
}

/* op2petsc_mat_set inserts the values of this rank's rows (blocks of
   bs×bs row-major values in pattern order) and assembles the matrix: row
   r's block columns are gcol[colidx[k]], its global block row rstart+r. */
EXPORT int op2petsc_mat_set(Mat A, long long n, int bs, const int32_t *rowptr, const int32_t *colidx,
		const int64_t *gcol, long long rstart, const double *vals, int *failed) {
	int rc = 0, wide = 0;
	for (long long r = 0; r < n; r++)
		if (rowptr[r + 1] - rowptr[r] > wide) wide = rowptr[r + 1] - rowptr[r];
	PetscInt *cols = malloc(((size_t)wide * bs + 1) * sizeof(PetscInt));
	PetscScalar *v = malloc(((size_t)wide * bs + 1) * sizeof(PetscScalar));
	if (!cols || !v) { rc = -2; *failed = -1; goto out; }
	for (long long r = 0; r < n; r++) {
		int32_t lo = rowptr[r], len = rowptr[r + 1] - lo;
		for (int32_t k = 0; k < len; k++)
			for (int b = 0; b < bs; b++) cols[k * bs + b] = (PetscInt)(gcol[colidx[lo + k]] * bs + b);
		for (int a = 0; a < bs; a++) {
			PetscInt row = (PetscInt)((rstart + r) * bs + a);
			for (int32_t k = 0; k < len; k++)
				for (int b = 0; b < bs; b++) v[k * bs + b] = vals[((size_t)(lo + k) * bs + a) * bs + b];
			TRY(MatSetValues, A, 1, &row, (PetscInt)(len * bs), cols, v, INSERT_VALUES);
		}
	}
	TRY(MatAssemblyBegin, A, MAT_FINAL_ASSEMBLY);
	TRY(MatAssemblyEnd, A, MAT_FINAL_ASSEMBLY);
out:
	free(cols);
	free(v);
	return rc;
}

/* op2petsc_mat_info writes MatInfo's 10 doubles (MAT_LOCAL) into info. */
EXPORT int op2petsc_mat_info(Mat A, double *info, int *failed) {
	int rc = 0;
	TRY(MatGetInfo, A, MAT_LOCAL, info);
out:
	return rc;
}

EXPORT int op2petsc_mat_type(Mat A, const char **type, int *failed) {
	int rc = 0;
	TRY(MatGetType, A, type);
out:
	return rc;
}

EXPORT int op2petsc_mat_destroy(Mat A) { return F(MatDestroy)(&A); }

/* op2petsc_ksp_create creates a solver of A x = b, for vectors of n
   block rows here and N in all (bs values each), with the options under
   prefix, after ksptype and pctype (when not empty), the tolerances
   (maxits iterations at most), the norm type (KSPNormType; -1, KSP_NORM_DEFAULT,
   leaves the KSP type's) and whether it starts from x's values (guess)
   or from zero. */
EXPORT int op2petsc_ksp_create(const char *prefix, Mat A, long long n, long long N, int bs, const char *ksptype,
		const char *pctype, double rtol, double atol, long long maxits, int guess, int norm, KSP *ksp, Vec *x,
		Vec *b, int *failed) {
	int rc = 0;
	KSP k = NULL;
	PC pc = NULL;
	Vec vx = NULL, vb = NULL;
	*ksp = NULL;
	*x = *b = NULL;
	TRY(VecCreateMPIWithArray, COMM, bs, (PetscInt)(n * bs), (PetscInt)(N * bs), NULL, &vx);
	TRY(VecCreateMPIWithArray, COMM, bs, (PetscInt)(n * bs), (PetscInt)(N * bs), NULL, &vb);
	TRY(KSPCreate, COMM, &k);
	TRY(KSPSetOptionsPrefix, k, prefix);
	TRY(KSPSetOperators, k, A, A);
	if (ksptype[0]) TRY(KSPSetType, k, ksptype);
	TRY(KSPGetPC, k, &pc);
	if (pctype[0]) TRY(PCSetType, pc, pctype);
	TRY(KSPSetTolerances, k, rtol, atol, -2 /* PETSC_DEFAULT */, (PetscInt)maxits);
	if (norm >= 0) TRY(KSPSetNormType, k, norm);
	TRY(KSPSetInitialGuessNonzero, k, guess != 0);
	TRY(KSPSetFromOptions, k);
	*ksp = k;
	*x = vx;
	*b = vb;
	k = NULL;
	vx = vb = NULL;
out:
	if (k) F(KSPDestroy)(&k);
	if (vx) F(VecDestroy)(&vx);
	if (vb) F(VecDestroy)(&vb);
	return rc;
}

/* op2petsc_ksp_solve solves with x and b over the arrays xa and ba
   (this rank's values), which PETSc holds only during the call, and
   says how it ended and which norm its convergence test measured. */
EXPORT int op2petsc_ksp_solve(KSP k, Vec x, Vec b, double *xa, const double *ba, long long *its, double *rnorm,
		int *reason, int *norm, int *failed) {
	int rc = 0, px = 0, pb = 0;
	PetscInt n = 0;
	*its = 0;
	*rnorm = 0;
	*reason = 0;
	*norm = -1;
	TRY(VecPlaceArray, b, ba);
	pb = 1;
	TRY(VecPlaceArray, x, xa);
	px = 1;
	TRY(KSPSolve, k, b, x);
	TRY(KSPGetIterationNumber, k, &n);
	*its = n;
	TRY(KSPGetResidualNorm, k, rnorm);
	TRY(KSPGetConvergedReason, k, reason);
	TRY(KSPGetNormType, k, norm);
out:
	if (px) F(VecResetArray)(x);
	if (pb) F(VecResetArray)(b);
	return rc;
}

/* op2petsc_reason_name returns the name PETSc gives reason. */
EXPORT const char *op2petsc_reason_name(int reason) {
	const char *const *names = *(const char *const *const *)fn[I_KSPConvergedReasons];
	return names[reason];
}

EXPORT int op2petsc_ksp_types(KSP k, const char **ksptype, const char **pctype, int *failed) {
	int rc = 0;
	PC pc = NULL;
	TRY(KSPGetType, k, ksptype);
	TRY(KSPGetPC, k, &pc);
	TRY(PCGetType, pc, pctype);
out:
	return rc;
}

EXPORT int op2petsc_ksp_destroy(KSP k, Vec x, Vec b) {
	int rc = F(KSPDestroy)(&k);
	int rx = F(VecDestroy)(&x);
	int rb = F(VecDestroy)(&b);
	return rc ? rc : rx ? rx : rb;
}
`, shimVersion, 8*intBytes, insertValues, matFinalAssembly, matLocal, norm1, idx.String())
}
