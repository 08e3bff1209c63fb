package ptscotch

import (
	"fmt"
	"strings"
)

// symbols are the PT-Scotch functions the shim calls, in the order of the
// function table Load fills and the shim indexes (shimSource numbers them).
var symbols = []string{
	"SCOTCH_numSizeof",
	"SCOTCH_version",
	"SCOTCH_memFree",
	"SCOTCH_contextAlloc",
	"SCOTCH_contextInit",
	"SCOTCH_contextExit",
	"SCOTCH_contextRandomClone",
	"SCOTCH_contextRandomSeed",
	"SCOTCH_contextThreadSpawn",
	"SCOTCH_contextOptionSetNum",
	"SCOTCH_contextBindDgraph",
	"SCOTCH_dgraphAlloc",
	"SCOTCH_dgraphInit",
	"SCOTCH_dgraphBuild",
	"SCOTCH_dgraphCheck",
	"SCOTCH_dgraphPart",
	"SCOTCH_dgraphExit",
	"SCOTCH_stratAlloc",
	"SCOTCH_stratInit",
	"SCOTCH_stratExit",
}

// shimVersion changes whenever the shim's entry point changes.
const shimVersion = 2

// shimSource returns the C shim for a PT-Scotch whose SCOTCH_Num is bits
// wide. It is compiled with the MPI compiler wrapper, for MPI_Comm, and
// declares the few prototypes it needs itself, so that no PT-Scotch header
// is needed; the opaque structures are allocated by PT-Scotch
// (SCOTCH_*Alloc), so their sizes do not matter either.
func shimSource(bits int) string {
	var idx strings.Builder
	for i, s := range symbols {
		fmt.Fprintf(&idx, "#define I_%s %d\n", strings.TrimPrefix(s, "SCOTCH_"), i)
	}
	return fmt.Sprintf(`#include <mpi.h>
#include <stdint.h>
#include <stddef.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define EXPORT __attribute__((visibility("default")))
#define OP2SCOTCH_VERSION %d

typedef int%d_t SCOTCH_Num;
typedef struct op2scotch_dgraph SCOTCH_Dgraph;
typedef struct op2scotch_strat SCOTCH_Strat;
typedef struct op2scotch_context SCOTCH_Context;

/* Option numbers of SCOTCH_contextOptionSetNum (library.h). */
#define SCOTCH_OPTIONNUMDETERMINISTIC 0
#define SCOTCH_OPTIONNUMRANDOMFIXEDSEED 1

%s
/* The prototypes of PT-Scotch 7 (ptscotch.h), as function pointer types. */
typedef void (*memFree_fn)(void *);
typedef SCOTCH_Context *(*contextAlloc_fn)(void);
typedef int (*contextInit_fn)(SCOTCH_Context *);
typedef void (*contextExit_fn)(SCOTCH_Context *);
typedef int (*contextRandomClone_fn)(SCOTCH_Context *);
typedef void (*contextRandomSeed_fn)(SCOTCH_Context *, SCOTCH_Num);
typedef int (*contextThreadSpawn_fn)(SCOTCH_Context *, int, const int *);
typedef int (*contextOptionSetNum_fn)(SCOTCH_Context *, int, SCOTCH_Num);
typedef int (*contextBindDgraph_fn)(SCOTCH_Context *, const SCOTCH_Dgraph *, SCOTCH_Dgraph *);
typedef SCOTCH_Dgraph *(*dgraphAlloc_fn)(void);
typedef int (*dgraphInit_fn)(SCOTCH_Dgraph *, MPI_Comm);
typedef int (*dgraphBuild_fn)(SCOTCH_Dgraph *, SCOTCH_Num, SCOTCH_Num, SCOTCH_Num, SCOTCH_Num *, SCOTCH_Num *,
	SCOTCH_Num *, SCOTCH_Num *, SCOTCH_Num, SCOTCH_Num, SCOTCH_Num *, SCOTCH_Num *, SCOTCH_Num *);
typedef int (*dgraphCheck_fn)(const SCOTCH_Dgraph *);
typedef int (*dgraphPart_fn)(SCOTCH_Dgraph *, SCOTCH_Num, SCOTCH_Strat *, SCOTCH_Num *);
typedef void (*dgraphExit_fn)(SCOTCH_Dgraph *);
typedef SCOTCH_Strat *(*stratAlloc_fn)(void);
typedef int (*stratInit_fn)(SCOTCH_Strat *);
typedef void (*stratExit_fn)(SCOTCH_Strat *);

#define F(name) ((name##_fn)fn[I_##name])

/* The communicator PT-Scotch works on: a duplicate of MPI_COMM_WORLD made
   by the first op2scotch_part (collectively, as op2scotch_part is). */
static MPI_Comm comm = MPI_COMM_NULL;

EXPORT int op2scotch_version(void) { return OP2SCOTCH_VERSION; }

/* op2scotch_part partitions the distributed graph whose n local vertices
   have the neighbours adj[xadj[i]..xadj[i+1]) (global numbers from 0) into
   parts parts, writing each local vertex's part to part. It runs on one
   thread, deterministically (a private random generator with a fixed
   seed), with the default strategy (5%% imbalance). It returns 0, or the
   failing call's return code with *failed set to its index in fn (-1 for
   MPI_Comm_dup, -2 when an allocation returned NULL, with *failed the
   allocator). */
EXPORT int op2scotch_part(void *const *fn, long long n, SCOTCH_Num *xadj, SCOTCH_Num *adj, long long nedge,
		long long parts, SCOTCH_Num *part, int check, int *failed) {
	SCOTCH_Context *ctx = NULL;
	SCOTCH_Dgraph *graph = NULL, *bound = NULL;
	SCOTCH_Strat *strat = NULL;
	int ctxinit = 0, graphinit = 0, stratinit = 0, rc = 0;
	*failed = -1;
	if (comm == MPI_COMM_NULL && (rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm)) != MPI_SUCCESS) return rc;
#define TRY(name, call) do { if ((rc = (call)) != 0) { *failed = I_##name; goto out; } } while (0)
#define ALLOC(name, var) do { if ((var = F(name)()) == NULL) { *failed = I_##name; rc = -2; goto out; } } while (0)
	ALLOC(contextAlloc, ctx);
	TRY(contextInit, F(contextInit)(ctx));
	ctxinit = 1;
	TRY(contextRandomClone, F(contextRandomClone)(ctx));
	F(contextRandomSeed)(ctx, 1);
	TRY(contextOptionSetNum, F(contextOptionSetNum)(ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1));
	TRY(contextOptionSetNum, F(contextOptionSetNum)(ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1));
	/* One thread: no threads started, and the calling thread's CPU
	   affinity left alone (with more, PT-Scotch binds the threads of
	   every rank to the first cores the rank may use). */
	TRY(contextThreadSpawn, F(contextThreadSpawn)(ctx, 1, NULL));
	ALLOC(dgraphAlloc, graph);
	TRY(dgraphInit, F(dgraphInit)(graph, comm));
	graphinit = 1;
	TRY(dgraphBuild, F(dgraphBuild)(graph, 0, (SCOTCH_Num)n, (SCOTCH_Num)n, xadj, xadj + 1, NULL, NULL,
		(SCOTCH_Num)nedge, (SCOTCH_Num)nedge, adj, NULL, NULL));
	if (check) TRY(dgraphCheck, F(dgraphCheck)(graph));
	ALLOC(dgraphAlloc, bound);
	TRY(contextBindDgraph, F(contextBindDgraph)(ctx, graph, bound));
	ALLOC(stratAlloc, strat);
	TRY(stratInit, F(stratInit)(strat));
	stratinit = 1;
	TRY(dgraphPart, F(dgraphPart)(bound, (SCOTCH_Num)parts, strat, part));
out:
	if (stratinit) F(stratExit)(strat);
	if (strat) F(memFree)(strat);
	if (bound) F(memFree)(bound); /* a container: SCOTCH_dgraphExit has nothing to free */
	if (graphinit) F(dgraphExit)(graph);
	if (graph) F(memFree)(graph);
	if (ctxinit) F(contextExit)(ctx);
	if (ctx) F(memFree)(ctx);
#ifdef __GLIBC__
	/* PT-Scotch's many medium-sized blocks stay in malloc's arena once
	   freed, counted in the process's memory for the rest of the run
	   (70 MB per rank on 2.88 M cells on 4 ranks): give them back. */
	malloc_trim(0);
#endif
	return rc;
}
`, shimVersion, bits, idx.String())
}
