/* A stand-in for libcuda.so.1 for tests on machines without a GPU: device
 * memory is host memory and a module holds one kernel. The kernel of a
 * module whose image is the text "image" adds its second parameter (a
 * 64-bit integer) to the 64-bit word its first parameter points at; a
 * kernel named op2_poke (the cuda backend's) writes its second
 * parameter's number of bytes from its 8-byte parameters 2 to 9 to its
 * first; any other kernel (a real CUBIN) does nothing. Launches are logged
 * to the file named by FAKE_CUDA_LOG. Graphs keep their kernel nodes and
 * run them in order. Only what internal/cuda calls is here, and only as
 * far as it needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static FILE *logf_;
static void say(const char *fmt, unsigned long long a, unsigned long long b, unsigned long long c) {
	if (!logf_) {
		const char *p = getenv("FAKE_CUDA_LOG");
		logf_ = fopen(p ? p : "/dev/null", "w");
		setvbuf(logf_, NULL, _IOLBF, 0);
	}
	fprintf(logf_, fmt, a, b, c);
}

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *s, int n, int d) { (void)d; snprintf(s, n, "fake"); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
	(void)d;
	switch (a) {
	case 1: *v = 1024; break;      /* threads per block */
	case 8: *v = 48 << 10; break;  /* shared memory per block */
	case 9: *v = 64 << 10; break;  /* constant memory */
	case 16: *v = 132; break;      /* multiprocessors */
	case 75: *v = 9; break;        /* compute capability 9.0 */
	case 76: *v = 0; break;
	case 97: *v = 227 << 10; break; /* shared memory per block, opted in */
	default: *v = 0;
	}
	return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *m, int d) { (void)d; *m = 1 << 30; return 0; }
static int ctx;
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &ctx; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void *c) { return c == &ctx ? 0 : 201; }
CUresult cuCtxSynchronize(void) { say("sync\n", 0, 0, 0); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)calloc(1, n); return *p ? 0 : 2; }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)p); return 0; }
CUresult cuMemAllocHost_v2(void **p, size_t n) { *p = calloc(1, n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)d, s, n); say("htod %llu\n", n, 0, 0); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)s, n); say("dtoh %llu\n", n, 0, 0); return 0; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)d, v, n); say("memset %llu\n", n, 0, 0); return 0; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { memcpy((void *)d, (void *)s, n); say("dtod %llu\n", n, 0, 0); return 0; }
static int adder_module, other_module, adder, noop, poke;
CUresult cuModuleLoadData(void **m, const void *img) { *m = memcmp(img, "image", 5) ? &other_module : &adder_module; return 0; }
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	*f = m == &adder_module ? (void *)&adder : strcmp(name, "op2_poke") == 0 ? (void *)&poke : (void *)&noop;
	return 0;
}
CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f; (void)a; (void)v; return 0; }

static CUresult run(void *f, unsigned grid, unsigned block, void **params) {
	if (grid == 0 || block > 1024) return 1; /* CUDA_ERROR_INVALID_VALUE */
	if (f == &poke) {
		unsigned char *dst = *(unsigned char **)params[0];
		int n = *(int *)params[1];
		for (int i = 0; i < n; i++) dst[i] = ((unsigned char *)params[2 + i / 8])[i % 8];
		say("poke %llu %llu\n", (unsigned long long)n, *(unsigned long long *)params[2], 0);
		return 0;
	}
	if (f != &adder) {
		say("noop %llu %llu\n", grid, block, 0);
		return 0;
	}
	long long *word = *(long long **)params[0];
	long long add = *(long long *)params[1];
	*word += add;
	say("kernel %llu %llu %llu\n", grid, block, (unsigned long long)add);
	return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
	(void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream; (void)extra;
	return run(f, gx, bx, params);
}
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = malloc(1); return 0; }
CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 0.5f; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { *s = r == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR"; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake"; return 0; }

/* Graphs: a chain of at most 64 nodes, each with its parameters copied
 * (two 8-byte values), as the real driver copies them. */
typedef struct {
	void *func;
	unsigned gx, gy, gz, bx, by, bz, shared;
	void **params;
	void **extra;
	void *kern;
	void *ctx;
} node_params;
typedef struct { void *f; unsigned grid, block; unsigned long long p[10]; } node;
typedef struct { int n; node nodes[64]; } graph;
CUresult cuGraphCreate(graph **g, unsigned f) { (void)f; *g = calloc(1, sizeof **g); say("graph\n", 0, 0, 0); return 0; }
CUresult cuGraphAddKernelNode_v2(node **out, graph *g, node *const *deps, size_t ndeps, const node_params *p) {
	if (g->n == 64 || (g->n > 0) != (ndeps == 1) || (ndeps == 1 && deps[0] != &g->nodes[g->n - 1]) || p->kern || p->ctx || p->extra)
		return 1;
	node *n = &g->nodes[g->n++];
	n->f = p->func, n->grid = p->gx, n->block = p->bx;
	int np = p->func == &poke ? 10 : p->func == &adder ? 2 : 1;
	for (int k = 0; k < np; k++) n->p[k] = *(unsigned long long *)p->params[k];
	*out = n;
	return 0;
}
CUresult cuGraphInstantiateWithFlags(graph **e, graph *g, unsigned long long f) {
	(void)f;
	*e = malloc(sizeof **e);
	**e = *g;
	say("instantiate %llu\n", (unsigned long long)g->n, 0, 0);
	return 0;
}
CUresult cuGraphDestroy(graph *g) { free(g); return 0; }
CUresult cuGraphLaunch(graph *e, void *s) {
	(void)s;
	say("graph launch %llu\n", (unsigned long long)e->n, 0, 0);
	for (int i = 0; i < e->n; i++) {
		void *params[10];
		for (int k = 0; k < 10; k++) params[k] = &e->nodes[i].p[k];
		CUresult r = run(e->nodes[i].f, e->nodes[i].grid, e->nodes[i].block, params);
		if (r) return r;
	}
	return 0;
}
CUresult cuGraphExecDestroy(graph *e) { free(e); say("graph destroy\n", 0, 0, 0); return 0; }
