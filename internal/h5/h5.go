// Package h5 is a small binding to the HDF5 C library (libhdf5 1.10 or
// later), loaded at run time with dlopen so that nothing about HDF5 is
// needed to build GoOP2 or to run programs that do not read or write HDF5
// files. It covers what package hdf5 uses: files, two-dimensional datasets
// read and written whole or by blocks of rows (hyperslabs; ReadRuns reads
// many runs of rows in one call), scalar integer
// and fixed-length string attributes.
//
// HDF5's predefined types (H5T_NATIVE_DOUBLE and the others) are macros over
// global variables (H5T_NATIVE_DOUBLE_g) that H5open initialises; the shim
// calls H5open and then reads those globals through dlsym.
//
// The serial HDF5 library is not thread-safe, so every call here holds one
// lock.
package h5

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// HDF5 1.10+: hid_t is 64 bits wide (checked through H5get_libversion).
typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;

static void *h5lib;
static herr_t (*pH5open)(void);
static herr_t (*pH5get_libversion)(unsigned *, unsigned *, unsigned *);
static herr_t (*pH5Eset_auto2)(hid_t, void *, void *);
static hid_t (*pH5Fcreate)(const char *, unsigned, hid_t, hid_t);
static hid_t (*pH5Fopen)(const char *, unsigned, hid_t);
static herr_t (*pH5Fclose)(hid_t);
static htri_t (*pH5Lexists)(hid_t, const char *, hid_t);
static hid_t (*pH5Dcreate2)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t);
static hid_t (*pH5Dopen2)(hid_t, const char *, hid_t);
static herr_t (*pH5Dclose)(hid_t);
static hid_t (*pH5Dget_space)(hid_t);
static hid_t (*pH5Dget_type)(hid_t);
static hsize_t (*pH5Dget_storage_size)(hid_t);
static hid_t (*pH5Dget_create_plist)(hid_t);
static int (*pH5Pget_nfilters)(hid_t);
static int (*pH5Pget_layout)(hid_t);
static herr_t (*pH5Dread)(hid_t, hid_t, hid_t, hid_t, hid_t, void *);
static herr_t (*pH5Dwrite)(hid_t, hid_t, hid_t, hid_t, hid_t, const void *);
static hid_t (*pH5Screate)(int);
static hid_t (*pH5Screate_simple)(int, const hsize_t *, const hsize_t *);
static int (*pH5Sget_simple_extent_ndims)(hid_t);
static int (*pH5Sget_simple_extent_dims)(hid_t, hsize_t *, hsize_t *);
static herr_t (*pH5Sselect_hyperslab)(hid_t, int, const hsize_t *, const hsize_t *, const hsize_t *, const hsize_t *);
static herr_t (*pH5Sclose)(hid_t);
static hid_t (*pH5Acreate2)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t);
static hid_t (*pH5Aopen)(hid_t, const char *, hid_t);
static htri_t (*pH5Aexists)(hid_t, const char *);
static herr_t (*pH5Aread)(hid_t, hid_t, void *);
static herr_t (*pH5Awrite)(hid_t, hid_t, const void *);
static hid_t (*pH5Aget_type)(hid_t);
static herr_t (*pH5Aclose)(hid_t);
static hid_t (*pH5Tcopy)(hid_t);
static herr_t (*pH5Tset_size)(hid_t, size_t);
static size_t (*pH5Tget_size)(hid_t);
static int (*pH5Tget_class)(hid_t);
static int (*pH5Tget_sign)(hid_t);
static htri_t (*pH5Tis_variable_str)(hid_t);
static herr_t (*pH5Tclose)(hid_t);
static hid_t (*pH5Pcreate)(hid_t);
static herr_t (*pH5Pset_create_intermediate_group)(hid_t, unsigned);
static herr_t (*pH5Pclose)(hid_t);
// Present in every build but looked up as optional, so that an older
// library still loads: selecting nothing, and not writing fill values.
static herr_t (*pH5Sselect_none)(hid_t);
static herr_t (*pH5Pset_fill_time)(hid_t, int);
// Only in a parallel (MPI) build. H5Pset_fapl_mpio takes MPI handles,
// whose C types are the MPI library's business: it is called through a
// function compiled with mpicc (op2_h5_create_mpio's setter).
static void *pH5Pset_fapl_mpio;
static herr_t (*pH5Pset_dxpl_mpio)(hid_t, int);
static hid_t clsFAPL, clsDXPL, clsDCPL; // property list classes

// The predefined types, read from the library's globals after H5open.
// Index: 0 double, 1 float, 2 int, 3 long long, 4 unsigned int, 5 C string,
// 6 unsigned char.
static hid_t h5types[7];
static hid_t h5lcpl; // link creation: create intermediate groups

#define LOAD(name) if (!(p##name = dlsym(h, #name))) { *missing = #name; dlclose(h); return NULL; }

// op2_h5_load opens the library and resolves every entry point and global.
// It returns NULL on success; else dlopen's message, or NULL with *missing
// set to the first symbol the library lacks, or with *missing "version"
// and *maj, *min the library's version when it is older than 1.10.
static const char *op2_h5_load(const char *path, const char **missing, unsigned *maj, unsigned *min) {
	*missing = NULL;
	if (h5lib) return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	LOAD(H5open) LOAD(H5get_libversion) LOAD(H5Eset_auto2)
	LOAD(H5Fcreate) LOAD(H5Fopen) LOAD(H5Fclose) LOAD(H5Lexists)
	LOAD(H5Dcreate2) LOAD(H5Dopen2) LOAD(H5Dclose) LOAD(H5Dget_space) LOAD(H5Dget_type) LOAD(H5Dread) LOAD(H5Dwrite)
	LOAD(H5Dget_storage_size) LOAD(H5Dget_create_plist) LOAD(H5Pget_nfilters) LOAD(H5Pget_layout)
	LOAD(H5Screate) LOAD(H5Screate_simple) LOAD(H5Sget_simple_extent_ndims) LOAD(H5Sget_simple_extent_dims)
	LOAD(H5Sselect_hyperslab) LOAD(H5Sclose)
	LOAD(H5Acreate2) LOAD(H5Aopen) LOAD(H5Aexists) LOAD(H5Aread) LOAD(H5Awrite) LOAD(H5Aget_type) LOAD(H5Aclose)
	LOAD(H5Tcopy) LOAD(H5Tset_size) LOAD(H5Tget_size) LOAD(H5Tget_class) LOAD(H5Tget_sign) LOAD(H5Tis_variable_str) LOAD(H5Tclose)
	LOAD(H5Pcreate) LOAD(H5Pset_create_intermediate_group) LOAD(H5Pclose)
	unsigned rel = 0;
	*maj = *min = 0;
	pH5get_libversion(maj, min, &rel);
	if (*maj < 1 || (*maj == 1 && *min < 10)) { *missing = "version"; dlclose(h); return NULL; }
	if (pH5open() < 0) { *missing = "H5open"; dlclose(h); return NULL; }
	const char *globals[7] = {"H5T_NATIVE_DOUBLE_g", "H5T_NATIVE_FLOAT_g", "H5T_NATIVE_INT_g",
		"H5T_NATIVE_LLONG_g", "H5T_NATIVE_UINT_g", "H5T_C_S1_g", "H5T_NATIVE_UCHAR_g"};
	for (int i = 0; i < 7; i++) {
		hid_t *g = dlsym(h, globals[i]);
		if (!g) { *missing = globals[i]; dlclose(h); return NULL; }
		h5types[i] = *g;
	}
	hid_t *lc = dlsym(h, "H5P_CLS_LINK_CREATE_ID_g");
	if (!lc) { *missing = "H5P_CLS_LINK_CREATE_ID_g"; dlclose(h); return NULL; }
	h5lcpl = pH5Pcreate(*lc);
	if (h5lcpl < 0 || pH5Pset_create_intermediate_group(h5lcpl, 1) < 0) { *missing = "H5Pcreate"; dlclose(h); return NULL; }
	pH5Sselect_none = dlsym(h, "H5Sselect_none");
	pH5Pset_fill_time = dlsym(h, "H5Pset_fill_time");
	pH5Pset_fapl_mpio = dlsym(h, "H5Pset_fapl_mpio");
	pH5Pset_dxpl_mpio = dlsym(h, "H5Pset_dxpl_mpio");
	const char *classes[3] = {"H5P_CLS_FILE_ACCESS_ID_g", "H5P_CLS_DATASET_XFER_ID_g", "H5P_CLS_DATASET_CREATE_ID_g"};
	hid_t *cls[3] = {&clsFAPL, &clsDXPL, &clsDCPL};
	for (int i = 0; i < 3; i++) {
		hid_t *g = dlsym(h, classes[i]);
		if (!g) { *missing = classes[i]; dlclose(h); return NULL; }
		*cls[i] = *g;
	}
	pH5Eset_auto2(0, NULL, NULL); // H5E_DEFAULT: errors come back as values, not printed
	h5lib = h;
	return NULL;
}

// op2_h5_quiet stops HDF5 printing its error stack for calls from this
// thread: a thread-safe HDF5 keeps that setting per thread, and Go makes
// calls from any thread. Every entry point below calls it first.
static void op2_h5_quiet(void) { pH5Eset_auto2(0, NULL, NULL); }

static hid_t op2_h5_create(const char *path) { op2_h5_quiet(); return pH5Fcreate(path, 2u, 0, 0); } // H5F_ACC_TRUNC
static hid_t op2_h5_open(const char *path, int rw) { op2_h5_quiet(); return pH5Fopen(path, rw ? 1u : 0u, 0); } // H5F_ACC_RDWR / RDONLY
static herr_t op2_h5_close(hid_t f) { op2_h5_quiet(); return pH5Fclose(f); }

// op2_h5_exists: 1 when name is a link in f, 0 when not, negative on error.
// Every intermediate group is checked first, as H5Lexists requires.
static int op2_h5_exists(hid_t f, const char *name) { op2_h5_quiet();
	size_t n = strlen(name);
	char *p = malloc(n + 1);
	if (!p) return -1;
	memcpy(p, name, n + 1);
	int r = 1;
	for (size_t i = 1; i <= n && r > 0; i++) {
		if (i < n && p[i] != '/') continue;
		char c = p[i];
		p[i] = 0;
		r = pH5Lexists(f, p, 0);
		p[i] = c;
	}
	free(p);
	return r;
}

// op2_h5_shape describes a dataset: its rank and up to two extents, its
// element type's class (0 integer, 1 float, 3 string...), size and
// signedness, and how its values are stored: the bytes allocated for them
// in the file, the layout (0 compact, 1 contiguous, 2 chunked, 3 virtual)
// and the number of filters (compression) they pass through. It returns an
// error message or NULL.
static const char *op2_h5_shape(hid_t f, const char *name, int *ndims, hsize_t dims[2], int *cls, size_t *size, int *sign,
		hsize_t *storage, int *layout, int *nfilters) { op2_h5_quiet();
	hid_t d = pH5Dopen2(f, name, 0);
	if (d < 0) return "cannot be opened as a dataset";
	const char *err = NULL;
	hid_t s = pH5Dget_space(d);
	hid_t t = pH5Dget_type(d);
	hid_t p = pH5Dget_create_plist(d);
	if (s < 0 || t < 0) { err = "has no readable dataspace or type"; goto out; }
	if (p < 0) { err = "has no readable creation properties"; goto out; }
	*storage = pH5Dget_storage_size(d);
	*layout = pH5Pget_layout(p);
	*nfilters = pH5Pget_nfilters(p);
	if (*layout < 0 || *nfilters < 0) { err = "has no readable storage layout"; goto out; }
	*ndims = pH5Sget_simple_extent_ndims(s);
	if (*ndims < 0) { err = "has no simple dataspace"; goto out; }
	hsize_t all[32];
	if (*ndims > 32) { err = "has more than 32 dimensions"; goto out; }
	if (*ndims > 0 && pH5Sget_simple_extent_dims(s, all, NULL) < 0) { err = "extent cannot be read"; goto out; }
	for (int i = 0; i < 2; i++) dims[i] = i < *ndims ? all[i] : 1;
	*cls = pH5Tget_class(t);
	*size = pH5Tget_size(t);
	*sign = *cls == 0 ? pH5Tget_sign(t) : -1;
out:
	if (p >= 0) pH5Pclose(p);
	if (t >= 0) pH5Tclose(t);
	if (s >= 0) pH5Sclose(s);
	pH5Dclose(d);
	return err;
}

// op2_h5_read reads rows [start, start+count) of a dataset of dim columns
// (its rank is ndims, 1 or 2) as type typ into buf.
static const char *op2_h5_read(hid_t f, const char *name, int typ, int ndims, hsize_t start, hsize_t count, hsize_t dim, void *buf) { op2_h5_quiet();
	hid_t d = pH5Dopen2(f, name, 0);
	if (d < 0) return "cannot be opened as a dataset";
	const char *err = NULL;
	hid_t fs = -1, ms = -1;
	hsize_t off[2] = {start, 0}, cnt[2] = {count, dim}, n = count * dim;
	if (count == 0) goto out;
	fs = pH5Dget_space(d);
	if (fs < 0) { err = "has no readable dataspace"; goto out; }
	if (ndims > 0 && pH5Sselect_hyperslab(fs, 0, off, NULL, cnt, NULL) < 0) { err = "rows cannot be selected"; goto out; }
	ms = pH5Screate_simple(1, &n, NULL);
	if (ms < 0) { err = "memory dataspace cannot be created"; goto out; }
	if (pH5Dread(d, h5types[typ], ms, fs, 0, buf) < 0) err = "cannot be read (or its values do not convert to the requested type)";
out:
	if (ms >= 0) pH5Sclose(ms);
	if (fs >= 0) pH5Sclose(fs);
	pH5Dclose(d);
	return err;
}

// op2_h5_read_runs reads n runs of rows of a two-dimensional dataset of
// dim columns as type typ, with one opening of the dataset: run i, rows
// [start[i], start[i]+count[i]), goes to bufs[into[i]] at byte offset
// off[i]. It returns NULL, or what failed with *failed the run (n when
// no run had begun).
static const char *op2_h5_read_runs(hid_t f, const char *name, int typ, hsize_t dim, size_t n,
		const hsize_t *start, const hsize_t *count, const unsigned char *into, const size_t *off,
		void *buf0, void *buf1, size_t *failed) { op2_h5_quiet();
	*failed = n;
	hid_t d = pH5Dopen2(f, name, 0);
	if (d < 0) return "cannot be opened as a dataset";
	const char *err = NULL;
	hid_t fs = pH5Dget_space(d), ms = -1;
	if (fs < 0) { err = "has no readable dataspace"; goto out; }
	for (size_t i = 0; i < n; i++) {
		if (count[i] == 0) continue;
		hsize_t o[2] = {start[i], 0}, c[2] = {count[i], dim}, m = count[i] * dim;
		*failed = i;
		if (pH5Sselect_hyperslab(fs, 0, o, NULL, c, NULL) < 0) { err = "rows cannot be selected"; goto out; }
		ms = pH5Screate_simple(1, &m, NULL);
		if (ms < 0) { err = "memory dataspace cannot be created"; goto out; }
		char *to = (char *)(into[i] ? buf1 : buf0) + off[i];
		if (pH5Dread(d, h5types[typ], ms, fs, 0, to) < 0) { err = "cannot be read (or its values do not convert to the requested type)"; goto out; }
		pH5Sclose(ms);
		ms = -1;
	}
out:
	if (ms >= 0) pH5Sclose(ms);
	if (fs >= 0) pH5Sclose(fs);
	pH5Dclose(d);
	return err;
}

// op2_h5_parallel: 1 when the library loaded is a parallel (MPI) build.
static int op2_h5_parallel(void) { return pH5Pset_fapl_mpio && pH5Pset_dxpl_mpio && pH5Sselect_none; }

// op2_h5_open_mpio creates (trunc) or opens for writing the file at path
// on every rank of the job at once, through MPI-IO: setter is a function
// built with mpicc that calls H5Pset_fapl_mpio (its first argument) on the
// file access list with the job's communicator. *dxpl receives a transfer
// list for collective writes. It returns the file, or -1 to -4 for the
// step that failed.
static hid_t op2_h5_open_mpio(const char *path, void *setter, int trunc, hid_t *dxpl) { op2_h5_quiet();
	*dxpl = -1;
	hid_t fapl = pH5Pcreate(clsFAPL);
	if (fapl < 0) return -1;
	if (((int (*)(void *, long long))setter)(pH5Pset_fapl_mpio, fapl) < 0) { pH5Pclose(fapl); return -2; }
	hid_t f = trunc ? pH5Fcreate(path, 2u, 0, fapl) : pH5Fopen(path, 1u, fapl);
	pH5Pclose(fapl);
	if (f < 0) return -3;
	hid_t x = pH5Pcreate(clsDXPL);
	if (x < 0 || pH5Pset_dxpl_mpio(x, 1) < 0) { // H5FD_MPIO_COLLECTIVE
		if (x >= 0) pH5Pclose(x);
		pH5Fclose(f);
		return -4;
	}
	*dxpl = x;
	return f;
}

static void op2_h5_close_plist(hid_t p) { if (p > 0) pH5Pclose(p); }

// closeFailed is a write's error when closing what it wrote fails: HDF5
// may write the values only then (a full disk shows here).
static const char *closeFailed = "cannot be written (closing it failed: is the disk full?)";

// op2_h5_write_part creates a dataset of rows × dim values (ndims 1 or 2)
// and writes rows [start, start+count) from buf. dxpl is 0 for a file of
// one process (buf NULL then writes nothing), or a collective transfer
// list: every rank of the job calls it, each with its own rows (count 0
// for none), and the values are not filled before they are written.
static const char *op2_h5_write_part(hid_t f, const char *name, int typ, int ndims, hsize_t rows, hsize_t dim,
		hsize_t start, hsize_t count, const void *buf, hid_t dxpl) { op2_h5_quiet();
	hsize_t dims[2] = {rows, dim};
	hid_t s = pH5Screate_simple(ndims, dims, NULL);
	if (s < 0) return "dataspace cannot be created";
	hid_t dcpl = 0;
	if (dxpl > 0 && pH5Pset_fill_time) {
		dcpl = pH5Pcreate(clsDCPL);
		if (dcpl < 0 || pH5Pset_fill_time(dcpl, 2) < 0) { if (dcpl >= 0) pH5Pclose(dcpl); dcpl = 0; } // H5D_FILL_TIME_NEVER
	}
	hid_t d = pH5Dcreate2(f, name, h5types[typ], s, h5lcpl, dcpl, 0);
	if (dcpl > 0) pH5Pclose(dcpl);
	const char *err = NULL;
	hid_t ms = -1;
	static const double dummy = 0;
	if (d < 0) { err = "cannot be created (does it exist already?)"; goto out; }
	if (rows * dim == 0 || (dxpl <= 0 && (!buf || count * dim == 0))) goto out;
	if (count * dim == 0 || !buf) {
		hsize_t one = 1;
		ms = pH5Screate_simple(1, &one, NULL);
		if (ms < 0 || pH5Sselect_none(ms) < 0 || pH5Sselect_none(s) < 0) { err = "empty selection cannot be made"; goto out; }
		buf = &dummy;
	} else {
		hsize_t off[2] = {start, 0}, cnt[2] = {ndims == 1 ? count * dim : count, dim}, n = count * dim;
		if (pH5Sselect_hyperslab(s, 0, off, NULL, cnt, NULL) < 0) { err = "rows cannot be selected"; goto out; }
		ms = pH5Screate_simple(1, &n, NULL);
		if (ms < 0) { err = "memory dataspace cannot be created"; goto out; }
	}
	if (pH5Dwrite(d, h5types[typ], ms, s, dxpl > 0 ? dxpl : 0, buf) < 0) err = "cannot be written";
out:
	if (ms >= 0) pH5Sclose(ms);
	// The library may write the values only as the dataset closes.
	if (d >= 0 && pH5Dclose(d) < 0 && !err) err = closeFailed;
	pH5Sclose(s);
	return err;
}

// op2_h5_write_int_attr attaches a one-element int attribute to a dataset.
static const char *op2_h5_write_int_attr(hid_t f, const char *name, const char *attr, int v) { op2_h5_quiet();
	hid_t d = pH5Dopen2(f, name, 0);
	if (d < 0) return "cannot be opened as a dataset";
	hsize_t one = 1;
	const char *err = NULL;
	hid_t s = pH5Screate_simple(1, &one, NULL);
	hid_t a = s < 0 ? -1 : pH5Acreate2(d, attr, h5types[2], s, 0, 0);
	if (a < 0 || pH5Awrite(a, h5types[2], &v) < 0) err = "attribute cannot be written";
	if (a >= 0 && pH5Aclose(a) < 0 && !err) err = closeFailed;
	if (s >= 0) pH5Sclose(s);
	if (pH5Dclose(d) < 0 && !err) err = closeFailed;
	return err;
}

// op2_h5_write_str_attr attaches a scalar fixed-length string attribute of
// size bytes (OP2's "type" attribute) to a dataset.
static const char *op2_h5_write_str_attr(hid_t f, const char *name, const char *attr, const char *v, size_t size) { op2_h5_quiet();
	hid_t d = pH5Dopen2(f, name, 0);
	if (d < 0) return "cannot be opened as a dataset";
	const char *err = NULL;
	char *buf = calloc(size + 1, 1);
	hid_t s = pH5Screate(0); // H5S_SCALAR
	hid_t t = pH5Tcopy(h5types[5]);
	hid_t a = -1;
	if (!buf || s < 0 || t < 0 || pH5Tset_size(t, size) < 0) { err = "attribute cannot be made"; goto out; }
	strncpy(buf, v, size);
	a = pH5Acreate2(d, attr, t, s, 0, 0);
	if (a < 0 || pH5Awrite(a, t, buf) < 0) err = "attribute cannot be written";
out:
	if (a >= 0 && pH5Aclose(a) < 0 && !err) err = closeFailed;
	if (t >= 0) pH5Tclose(t);
	if (s >= 0) pH5Sclose(s);
	free(buf);
	if (pH5Dclose(d) < 0 && !err) err = closeFailed;
	return err;
}

// op2_h5_read_attr reads attribute attr of a dataset: an integer into *iv
// (kind 0), or a fixed-length string of at most cap bytes into sv (kind 1).
// *found is 0 when the attribute does not exist.
static const char *op2_h5_read_attr(hid_t f, const char *name, const char *attr, int kind, int *iv, char *sv, size_t cap, int *found) { op2_h5_quiet();
	*found = 0;
	hid_t d = pH5Dopen2(f, name, 0);
	if (d < 0) return "cannot be opened as a dataset";
	const char *err = NULL;
	hid_t a = -1, t = -1;
	htri_t ex = pH5Aexists(d, attr);
	if (ex < 0) { err = "attributes cannot be read"; goto out; }
	if (ex == 0) goto out;
	*found = 1;
	a = pH5Aopen(d, attr, 0);
	if (a < 0) { err = "attribute cannot be opened"; goto out; }
	if (kind == 0) {
		if (pH5Aread(a, h5types[2], iv) < 0) err = "attribute is not an integer";
		goto out;
	}
	t = pH5Aget_type(a);
	if (t < 0 || pH5Tget_class(t) != 3 || pH5Tis_variable_str(t) != 0 || pH5Tget_size(t) > cap) { err = "attribute is not a short fixed-length string"; goto out; }
	memset(sv, 0, cap);
	if (pH5Aread(a, t, sv) < 0) err = "attribute cannot be read";
out:
	if (t >= 0) pH5Tclose(t);
	if (a >= 0) pH5Aclose(a);
	pH5Dclose(d);
	return err;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/spawn"
)

// ErrNoHDF5 is wrapped by the errors returned when the HDF5 library cannot
// be loaded.
var ErrNoHDF5 = errors.New("HDF5 is not available")

// LibraryEnv names the environment variable that points GoOP2 at an HDF5
// library (a path or a soname) other than the system's.
const LibraryEnv = "OP2_HDF5_LIBRARY"

// Install says what provides the library on Debian.
const Install = "apt-get install libhdf5-103-1, or libhdf5-dev"

// InstallParallel says what provides the parallel library on Debian.
const InstallParallel = "apt-get install libhdf5-openmpi-103-1"

// sonames are tried in order: Debian's serial build, then upstream's names.
var sonames = []string{"libhdf5_serial.so.103", "libhdf5.so.103", "libhdf5_serial.so", "libhdf5.so", "libhdf5.so.310", "libhdf5.so.200"}

// parallelSonames are Debian's parallel builds, for Open MPI and MPICH.
var parallelSonames = []string{"libhdf5_openmpi.so.103", "libhdf5_openmpi.so", "libhdf5_mpich.so.103", "libhdf5_mpich.so"}

var (
	mu      sync.Mutex
	loaded  bool
	loadErr error
	// parallel is true when the library loaded is a parallel build:
	// its calls then run on MPI's thread once MPI is started.
	parallel bool
	// setter calls H5Pset_fapl_mpio with MPI's communicator (built on
	// first use by OpenMPIO).
	setter unsafe.Pointer
)

// Parallel reports whether the library loaded (loading it if need be) is
// a parallel build that OpenMPIO can use. In a program started by an MPI
// launcher on several processes the library loaded is Debian's parallel
// build for the MPI in use when one is installed, else the serial one.
func Parallel() bool {
	mu.Lock()
	defer mu.Unlock()
	return load() == nil && parallel
}

// Load opens the HDF5 library once (the one named by $OP2_HDF5_LIBRARY,
// else the system's) and reports why it cannot be used.
func Load() error {
	mu.Lock()
	defer mu.Unlock()
	return load()
}

func load() error {
	if loaded || loadErr != nil {
		return loadErr
	}
	names := sonames
	if mpi.Launched() > 1 {
		par := parallelSonames
		if w := mpi.Current(); w != nil && strings.Contains(w.Library(), "MPICH") {
			par = []string{par[2], par[3], par[0], par[1]}
		}
		names = append(slices.Clone(par), sonames...)
	}
	if p := os.Getenv(LibraryEnv); p != "" {
		names = []string{p}
	}
	var msgs []string
	for _, name := range names {
		cname := C.CString(name)
		var missing *C.char
		var maj, min C.uint
		var msg *C.char
		do(func() { msg = C.op2_h5_load(cname, &missing, &maj, &min) })
		C.free(unsafe.Pointer(cname))
		switch {
		case msg == nil && missing == nil:
			loaded = true
			parallel = C.op2_h5_parallel() != 0
			return nil
		case msg != nil:
			msgs = append(msgs, C.GoString(msg))
			continue
		case C.GoString(missing) == "version":
			loadErr = fmt.Errorf("%w: %s is HDF5 %d.%d; GoOP2 needs HDF5 1.10 or later (%s, or point %s at one)", ErrNoHDF5, name, maj, min, Install, LibraryEnv)
		default:
			loadErr = fmt.Errorf("%w: %s lacks %s; is it HDF5's C library? (%s, or point %s at libhdf5)", ErrNoHDF5, name, C.GoString(missing), Install, LibraryEnv)
		}
		return loadErr
	}
	what := "no HDF5 library found"
	if len(names) == 1 {
		what = "loading " + names[0] + " failed"
	}
	loadErr = fmt.Errorf("%w: %s (Debian: %s; or point %s at libhdf5): %s", ErrNoHDF5, what, Install, LibraryEnv, msgs[len(msgs)-1])
	return loadErr
}

// Type is an element type in memory.
type Type int

// The element types, in the shim's order of predefined types.
const (
	Float64 Type = iota // double
	Float32             // float
	Int32               // int
	Int64               // long long
	Uint32              // unsigned int
	// Uint8 is unsigned char (bytes); 5 is the shim's C string type.
	Uint8 Type = 6
)

// File is an open HDF5 file.
type File struct {
	id    C.hid_t
	dxpl  C.hid_t    // a collective transfer list for a file opened by OpenMPIO; 0 otherwise
	world *mpi.World // the job of a file opened by OpenMPIO; nil otherwise
}

// do runs f, a call into the library, on the thread that makes MPI's
// calls when the library is a parallel build and MPI is started (MPI was
// initialised for serialised calls from one thread), else on the
// caller's.
func do(f func()) {
	if parallel {
		if w := mpi.Current(); w != nil && !w.Finalized() {
			w.Do(f)
			return
		}
	}
	f()
}

// enter takes the library's lock and returns C copies of strs; done
// frees them and releases the lock.
func enter(strs ...string) (c []*C.char, done func()) {
	mu.Lock()
	c = make([]*C.char, len(strs))
	for i, s := range strs {
		c[i] = C.CString(s)
	}
	return c, func() {
		for _, p := range c {
			C.free(unsafe.Pointer(p))
		}
		mu.Unlock()
	}
}

func errOf(msg *C.char) error {
	if msg == nil {
		return nil
	}
	return errors.New(C.GoString(msg))
}

// createFailed says why HDF5 could not create the file at path, as far
// as the file system tells: HDF5's error stack names no cause.
func createFailed(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot be created: its folder %s does not exist", dir)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("cannot be created: %s is not a folder", dir)
	case err == nil && syscall.Access(dir, 2|1) != nil: // W_OK|X_OK
		return fmt.Errorf("cannot be created: this process may not write in its folder %s", dir)
	}
	return errors.New("cannot be created")
}

// Create creates (or truncates) the file at path.
func Create(path string) (*File, error) {
	c, done := enter(path)
	defer done()
	if err := load(); err != nil {
		return nil, err
	}
	var id C.hid_t
	do(func() {
		defer spawn.Opening()() // libhdf5's descriptor is not close-on-exec
		id = C.op2_h5_create(c[0])
	})
	if id < 0 {
		return nil, createFailed(path)
	}
	return &File{id: id}, nil
}

// Open opens an existing file, read-only or for reading and writing.
func Open(path string, write bool) (*File, error) {
	c, done := enter(path)
	defer done()
	if err := load(); err != nil {
		return nil, err
	}
	rw := C.int(0)
	if write {
		rw = 1
	}
	var id C.hid_t
	do(func() {
		defer spawn.Opening()() // libhdf5's descriptor is not close-on-exec
		id = C.op2_h5_open(c[0], rw)
	})
	if id < 0 {
		return nil, errors.New("is not an HDF5 file or cannot be opened")
	}
	return &File{id: id}, nil
}

// setterSource calls H5Pset_fapl_mpio with MPI_COMM_WORLD; compiled with
// the MPI compiler wrapper, it knows what an MPI_Comm is.
const setterSource = `#include <mpi.h>
__attribute__((visibility("default"))) int op2h5_set_fapl(void *fn, long long fapl) {
	return ((int (*)(long long, MPI_Comm, MPI_Info))fn)(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
}
`

// OpenMPIO creates (truncate) or opens for writing the file at path on
// every rank of MPI's world (mpi.Current), through MPI-IO. It is collective:
// every rank calls it, and then every method of the file, with the same
// arguments in the same order (WriteRows with each rank's rows). It needs
// the parallel library (Parallel).
func OpenMPIO(path string, truncate bool) (*File, error) {
	c, done := enter(path)
	defer done()
	if err := load(); err != nil {
		return nil, err
	}
	world := mpi.Current()
	if world == nil {
		return nil, errors.New("cannot be written through MPI-IO: MPI is not started")
	}
	if !parallel {
		return nil, fmt.Errorf("%w: the HDF5 library loaded is not a parallel build (%s)", ErrNoHDF5, InstallParallel)
	}
	if setter == nil {
		lib, err := world.Build(setterSource, []string{"op2h5_set_fapl"})
		if err != nil {
			return nil, fmt.Errorf("building the MPI-IO shim: %w", err)
		}
		if setter, err = lib.Symbol("op2h5_set_fapl"); err != nil {
			return nil, err
		}
	}
	t := C.int(0)
	if truncate {
		t = 1
	}
	var id, dxpl C.hid_t
	world.Do(func() {
		defer spawn.Opening()() // MPI-IO's descriptors are not close-on-exec
		id = C.op2_h5_open_mpio(c[0], setter, t, &dxpl)
	})
	switch {
	case id == -2:
		return nil, errors.New("cannot be opened through MPI-IO (H5Pset_fapl_mpio failed)")
	case id == -4:
		return nil, errors.New("has no collective transfer list (H5Pset_dxpl_mpio failed)")
	case id < 0 && truncate:
		return nil, createFailed(path)
	case id < 0:
		return nil, errors.New("is not an HDF5 file or cannot be opened for writing")
	}
	return &File{id: id, dxpl: dxpl, world: world}, nil
}

// Close closes the file; it is safe to call twice.
func (f *File) Close() error {
	mu.Lock()
	defer mu.Unlock()
	if f.id < 0 {
		return nil
	}
	var rc C.herr_t
	do(func() {
		C.op2_h5_close_plist(f.dxpl)
		rc = C.op2_h5_close(f.id)
	})
	f.id = -1
	if rc < 0 {
		return errors.New("closing failed")
	}
	return nil
}

// Exists reports whether name (a path of groups and a dataset) exists.
func (f *File) Exists(name string) (bool, error) {
	c, done := enter(name)
	defer done()
	var r C.int
	do(func() { r = C.op2_h5_exists(f.id, c[0]) })
	if r < 0 {
		return false, errors.New("cannot be looked up")
	}
	return r > 0, nil
}

// Shape describes a dataset.
type Shape struct {
	NDims     int    // rank of the dataspace (0 for a scalar)
	Rows, Dim int    // first and second extents (1 where absent)
	Class     int    // HDF5 type class: 0 integer, 1 float, 3 string, ...
	Size      int    // element size in bytes
	Signed    bool   // integers: two's complement
	TypeName  string // the C name of the element type, as OP2 writes it, or a description
	ElemCount uint64 // number of elements of the dataspace
	Storage   uint64 // bytes allocated in the file for the values (H5Dget_storage_size)
	Layout    Layout // how the values are stored
	Filters   int    // filters (compression, checksums) the stored values pass through
}

// Layout is a dataset's storage layout (H5D_layout_t).
type Layout int

// The storage layouts.
const (
	Compact    Layout = iota // in the dataset's object header
	Contiguous               // one block of the file
	Chunked                  // blocks of the file, allocated as they are written
	Virtual                  // mapped from datasets of other files
)

func (l Layout) String() string {
	switch l {
	case Compact:
		return "compact"
	case Contiguous:
		return "contiguous"
	case Chunked:
		return "chunked"
	case Virtual:
		return "virtual"
	}
	return fmt.Sprintf("layout %d", int(l))
}

// Stat describes the dataset name.
func (f *File) Stat(name string) (Shape, error) {
	c, done := enter(name)
	defer done()
	var nd, cls, sign, layout, nfilters C.int
	var dims [2]C.hsize_t
	var size C.size_t
	var storage C.hsize_t
	var msg *C.char
	do(func() {
		msg = C.op2_h5_shape(f.id, c[0], &nd, &dims[0], &cls, &size, &sign, &storage, &layout, &nfilters)
	})
	if err := errOf(msg); err != nil {
		return Shape{}, err
	}
	hi, count := bits.Mul64(uint64(dims[0]), uint64(dims[1]))
	if hi != 0 || uint64(dims[0]) > math.MaxInt64 || uint64(dims[1]) > math.MaxInt64 {
		return Shape{}, fmt.Errorf("has an extent too large (%d × %d)", uint64(dims[0]), uint64(dims[1]))
	}
	s := Shape{NDims: int(nd), Rows: int(dims[0]), Dim: int(dims[1]), Class: int(cls), Size: int(size), Signed: sign == 1,
		ElemCount: count, Storage: uint64(storage), Layout: Layout(layout), Filters: int(nfilters)}
	s.TypeName = typeName(s)
	return s, nil
}

func typeName(s Shape) string {
	switch {
	case s.Class == 1 && s.Size == 8:
		return "double"
	case s.Class == 1 && s.Size == 4:
		return "float"
	case s.Class == 0 && s.Size == 4 && s.Signed:
		return "int"
	case s.Class == 0 && s.Size == 4:
		return "unsigned int"
	case s.Class == 0 && s.Size == 8 && s.Signed:
		return "long long"
	case s.Class == 0 && s.Size == 8:
		return "unsigned long long"
	case s.Class == 0:
		return fmt.Sprintf("%d-byte integer", s.Size)
	case s.Class == 1:
		return fmt.Sprintf("%d-byte float", s.Size)
	case s.Class == 3:
		return "string"
	}
	return fmt.Sprintf("HDF5 type class %d", s.Class)
}

// Read reads rows [start, start+count) of dim values each from the dataset
// name (of rank ndims) into buf, which must hold count*dim values of typ.
func (f *File) Read(name string, typ Type, ndims, start, count, dim int, buf unsafe.Pointer) error {
	c, done := enter(name)
	defer done()
	var msg *C.char
	do(func() {
		msg = C.op2_h5_read(f.id, c[0], C.int(typ), C.int(ndims), C.hsize_t(start), C.hsize_t(count), C.hsize_t(dim), buf)
	})
	return errOf(msg)
}

// Run is a run of rows that ReadRuns reads: Count rows from row Start of
// the dataset, to byte Offset of one of its two buffers (Into 0 or 1).
type Run struct {
	Start, Count uint64
	Into         uint8
	Offset       uintptr
}

// ReadRuns reads runs of rows of the two-dimensional dataset name, of dim
// columns, as type typ, opening the dataset once: each run's rows go to
// buf0 or buf1 at its offset, which must hold them (Count × dim values
// of typ). It is not collective: each rank reads its own runs.
func (f *File) ReadRuns(name string, typ Type, dim int, runs []Run, buf0, buf1 unsafe.Pointer) error {
	if len(runs) == 0 {
		return nil
	}
	n := len(runs)
	// C memory: the runs' arrays hold no Go pointers, but one allocation
	// in C keeps them out of the garbage collector's way.
	mem := C.malloc(C.size_t(n) * C.size_t(3*8+1))
	if mem == nil {
		return errors.New("no memory for the runs to read")
	}
	defer C.free(mem)
	start := unsafe.Slice((*C.hsize_t)(mem), n)
	count := unsafe.Slice((*C.hsize_t)(unsafe.Add(mem, 8*n)), n)
	off := unsafe.Slice((*C.size_t)(unsafe.Add(mem, 16*n)), n)
	into := unsafe.Slice((*C.uchar)(unsafe.Add(mem, 24*n)), n)
	for i, r := range runs {
		start[i], count[i], off[i], into[i] = C.hsize_t(r.Start), C.hsize_t(r.Count), C.size_t(r.Offset), C.uchar(r.Into)
	}
	c, done := enter(name)
	defer done()
	var msg *C.char
	var failed C.size_t
	do(func() {
		msg = C.op2_h5_read_runs(f.id, c[0], C.int(typ), C.hsize_t(dim), C.size_t(n), &start[0], &count[0], &into[0], &off[0], buf0, buf1, &failed)
	})
	if err := errOf(msg); err != nil {
		if int(failed) < n {
			r := runs[failed]
			return fmt.Errorf("rows [%d,%d): %w", r.Start, r.Start+r.Count, err)
		}
		return err
	}
	return nil
}

// Write creates the dataset name (rank ndims, 1 or 2; groups in its path
// are created) with rows×dim values of typ from buf. With buf nil it
// writes no values: HDF5 allocates no storage for them until they are
// written, and reads them as zeros (tests make datasets whose extent
// claims more than their file holds this way).
func (f *File) Write(name string, typ Type, ndims, rows, dim int, buf unsafe.Pointer) error {
	return f.WriteRows(name, typ, ndims, rows, dim, 0, rows, buf)
}

// WriteRows creates the dataset name as Write does (rows × dim values of
// typ) and writes rows [start, start+count) of it from buf, which holds
// count×dim values. In a file opened by OpenMPIO it is collective: every
// rank calls it with the same name, type and shape, each with its own
// rows (count 0: none), in one collective MPI-IO write, and the values
// are not filled before they are written.
func (f *File) WriteRows(name string, typ Type, ndims, rows, dim, start, count int, buf unsafe.Pointer) error {
	c, done := enter(name)
	defer done()
	if start < 0 || count < 0 || start > rows || count > rows-start {
		return fmt.Errorf("rows [%d,%d) of %d cannot be written", start, start+count, rows)
	}
	var msg *C.char
	do(func() {
		msg = C.op2_h5_write_part(f.id, c[0], C.int(typ), C.int(ndims), C.hsize_t(rows), C.hsize_t(dim),
			C.hsize_t(start), C.hsize_t(count), buf, f.dxpl)
	})
	return errOf(msg)
}

// WriteIntAttr attaches a one-element int attribute to dataset name.
func (f *File) WriteIntAttr(name, attr string, v int32) error {
	c, done := enter(name, attr)
	defer done()
	var msg *C.char
	do(func() { msg = C.op2_h5_write_int_attr(f.id, c[0], c[1], C.int(v)) })
	return errOf(msg)
}

// WriteStringAttr attaches a fixed-length string attribute of size bytes.
func (f *File) WriteStringAttr(name, attr, v string, size int) error {
	c, done := enter(name, attr, v)
	defer done()
	var msg *C.char
	do(func() { msg = C.op2_h5_write_str_attr(f.id, c[0], c[1], c[2], C.size_t(size)) })
	return errOf(msg)
}

// IntAttr reads an integer attribute; found is false when it is absent.
func (f *File) IntAttr(name, attr string) (v int32, found bool, err error) {
	c, done := enter(name, attr)
	defer done()
	var iv, fd C.int
	var msg *C.char
	do(func() { msg = C.op2_h5_read_attr(f.id, c[0], c[1], 0, &iv, nil, 0, &fd) })
	err = errOf(msg)
	return int32(iv), fd != 0, err
}

// StringAttr reads a fixed-length string attribute (at most 255 bytes),
// up to its first NUL; found is false when it is absent.
func (f *File) StringAttr(name, attr string) (v string, found bool, err error) {
	c, done := enter(name, attr)
	defer done()
	const capacity = 256
	buf := (*C.char)(C.calloc(capacity, 1))
	defer C.free(unsafe.Pointer(buf))
	var fd C.int
	var msg *C.char
	do(func() { msg = C.op2_h5_read_attr(f.id, c[0], c[1], 1, nil, buf, capacity-1, &fd) })
	if err = errOf(msg); err != nil {
		return "", fd != 0, err
	}
	return C.GoString(buf), fd != 0, nil
}
