package mgcfd

// The kernels of the cycle, in C, as GoOP2 compiles them. A node's
// variables are, in order, density, x, y and z momentum and density ×
// energy. The kernels use the constants declared by the Solver: mg_smooth
// (the artificial dissipation coefficient), mg_ff (the far-field
// variables) and mg_ff_flux (the far-field fluxes: the x, y and z momentum
// rows and the energy row, each along x, y and z).
//
// The arithmetic is MG-CFD's, in the order it evaluates it, so that the
// results agree with the original to rounding.

// stateSrc is the code the flux and time-step kernels share. Like the
// original's structures.h it declares its own struct double3 for a
// node's velocity and momentum (which OpenCL C and CUDA have built in as
// a vector type; the device generator renames ours), with a typedef so
// that C uses it as C++ does, and dot (an OpenCL C built-in function's
// name) for their dot products. mg_read makes a node's state from its
// variables (density r, momentum m, density × energy e): with its
// velocity u, squared speed q, pressure p and speed of sound c. The
// kernels pass it the variables' values, not the pointer, so that their
// loops still get SIMD lanes (a kernel that passes a parameter on runs
// the scalar code).
const stateSrc = `
#define MG_GAMMA 1.4
struct double3 { double x, y, z; };
typedef struct double3 double3;
struct mg_state { double r, e, q, p, c; double3 m, u; };

static inline double dot(double3 a, double3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static inline struct mg_state mg_read(double r, double mx, double my, double mz, double e) {
  struct mg_state s;
  s.r = r;
  s.e = e;
  s.m.x = mx;
  s.m.y = my;
  s.m.z = mz;
  s.u.x = s.m.x / s.r;
  s.u.y = s.m.y / s.r;
  s.u.z = s.m.z / s.r;
  s.q = dot(s.u, s.u);
  s.p = (MG_GAMMA - 1.0) * (s.e - 0.5 * s.r * s.q);
  s.c = sqrt(MG_GAMMA * s.p / s.r);
  return s;
}
`

// fluxesSrc adds, for the flux kernels, mg_fluxes: the Euler fluxes of a
// node's state, momentum row i along x, y and z in f[i] (component i
// along d is u[min(i,d)]·m[max(i,d)], + p when i = d) and energy along x,
// y and z in g (u·(e + p)).
const fluxesSrc = stateSrc + `
static inline void mg_fluxes(const struct mg_state *s, double3 *f, double3 *g) {
  f[0].x = s->u.x * s->m.x;
  f[0].y = s->u.x * s->m.y;
  f[0].z = s->u.x * s->m.z;
  f[1].x = f[0].y;
  f[1].y = s->u.y * s->m.y;
  f[1].z = s->u.y * s->m.z;
  f[2].x = f[0].z;
  f[2].y = f[1].z;
  f[2].z = s->u.z * s->m.z;
  f[0].x += s->p;
  f[1].y += s->p;
  f[2].z += s->p;
  double ep = s->e + s->p;
  g->x = s->u.x * ep;
  g->y = s->u.y * ep;
  g->z = s->u.z * ep;
}
`

// fluxEdgeSrc adds an edge's flux to its two nodes: the central flux
// through the edge's dual face plus a scalar dissipation proportional to
// the face's area and the largest wave speeds. mg_face is one variable's
// share: k times the difference of the variable, plus the face's normal
// g dotted with the sum of the two nodes' fluxes, summed in the order
// MG-CFD sums them.
const fluxEdgeSrc = fluxesSrc + `
static inline double mg_face(double k, double diff, double3 g, double3 fa, double3 fb) {
  return k * diff + g.x * (fa.x + fb.x) + g.y * (fa.y + fb.y) + g.z * (fa.z + fb.z);
}

void mg_flux_edge(const double *va, const double *vb, const double *w,
                  double *fa, double *fb) {
  double3 n = {w[0], w[1], w[2]};
  double len = sqrt(dot(n, n));
  struct mg_state b = mg_read(vb[0], vb[1], vb[2], vb[3], vb[4]);
  struct mg_state a = mg_read(va[0], va[1], va[2], va[3], va[4]);
  double3 Fb[3], Gb, Fa[3], Ga;
  mg_fluxes(&b, Fb, &Gb);
  mg_fluxes(&a, Fa, &Ga);
  double sa = sqrt(a.q), sb = sqrt(b.q);
  double ka = -len * mg_smooth * 0.5 * (sa + sqrt(b.q) + a.c + b.c);
  double kb = -len * mg_smooth * 0.5 * (sb + sqrt(a.q) + b.c + a.c);
  double3 g = {-0.5 * w[0], -0.5 * w[1], -0.5 * w[2]};
  double3 h = {0.5 * w[0], 0.5 * w[1], 0.5 * w[2]};
  fa[0] += mg_face(ka, a.r - b.r, g, a.m, b.m);
  fa[1] += mg_face(ka, a.m.x - b.m.x, g, Fa[0], Fb[0]);
  fa[2] += mg_face(ka, a.m.y - b.m.y, g, Fa[1], Fb[1]);
  fa[3] += mg_face(ka, a.m.z - b.m.z, g, Fa[2], Fb[2]);
  fa[4] += mg_face(ka, a.e - b.e, g, Ga, Gb);
  fb[0] += mg_face(kb, b.r - a.r, h, a.m, b.m);
  fb[1] += mg_face(kb, b.m.x - a.m.x, h, Fa[0], Fb[0]);
  fb[2] += mg_face(kb, b.m.y - a.m.y, h, Fa[1], Fb[1]);
  fb[3] += mg_face(kb, b.m.z - a.m.z, h, Fa[2], Fb[2]);
  fb[4] += mg_face(kb, b.e - a.e, h, Ga, Gb);
}`

// fluxBndSrc adds a boundary node's flux: groups up to 2 are solid
// surfaces (the pressure on the face), 3 to 7 far field (the mean of the
// node's flux and the free stream's through the face; add sums two
// vectors).
const fluxBndSrc = fluxesSrc + `
static inline double3 add(double3 a, double3 b) {
  double3 s = {a.x + b.x, a.y + b.y, a.z + b.z};
  return s;
}

void mg_flux_bnd(const int *grp, const double *w, const double *v, double *f) {
  struct mg_state s = mg_read(v[0], v[1], v[2], v[3], v[4]);
  if (*grp <= 2) {
    f[0] += 0.0;
    f[1] += w[0] * s.p;
    f[2] += w[1] * s.p;
    f[3] += w[2] * s.p;
    f[4] += 0.0;
  } else if (*grp <= 7) {
    double3 F[3], G;
    mg_fluxes(&s, F, &G);
    double3 h = {0.5 * w[0], 0.5 * w[1], 0.5 * w[2]};
    double3 ffm = {mg_ff[1], mg_ff[2], mg_ff[3]};
    double3 ffg = {mg_ff_flux[9], mg_ff_flux[10], mg_ff_flux[11]};
    f[0] += dot(h, add(ffm, s.m));
    f[4] += dot(h, add(ffg, G));
    for (int i = 0; i < 3; i++) {
      double3 ff = {mg_ff_flux[3 * i], mg_ff_flux[3 * i + 1], mg_ff_flux[3 * i + 2]};
      f[1 + i] += dot(h, add(ff, F[i]));
    }
  }
}`

const initVarsSrc = `
void mg_init_vars(double *v) {
  for (int i = 0; i < 5; i++) v[i] = mg_ff[i];
}`

const zero5Src = `
void mg_zero5(double *a) {
  for (int i = 0; i < 5; i++) a[i] = 0.0;
}`

const zero1Src = `
void mg_zero1(double *a) { *a = 0.0; }`

// volumesSrc adds each edge's share of its nodes' dual volumes (a third of
// half the edge's length times its face area) and turns its weight into
// the face area along the edge, over the edge's length.
const volumesSrc = `
void mg_volumes(const double *xa, const double *xb, double *w,
                double *vola, double *volb) {
  double d[3], len = 0.0, area = 0.0;
  for (int i = 0; i < 3; i++) {
    d[i] = xb[i] - xa[i];
    len += d[i] * d[i];
  }
  len = sqrt(len);
  for (int i = 0; i < 3; i++) area += w[i] * w[i];
  area = sqrt(area);
  double vol = (1.0 / 3.0) * 0.5 * len * area;
  *vola += vol;
  *volb += vol;
  for (int i = 0; i < 3; i++) w[i] = (d[i] / len) * area;
  for (int i = 0; i < 3; i++) w[i] /= len;
}`

// dampSrc scales a weight down, as MG-CFD does to its meshes' weights
// before the first cycle.
const dampSrc = `
void mg_damp(double *w) {
  w[0] *= 1e-7;
  w[1] *= 1e-7;
  w[2] *= 1e-7;
}`

const copyVarsSrc = `
void mg_copy_vars(const double *v, double *old) {
  for (int i = 0; i < 5; i++) old[i] = v[i];
}`

// calcDtSrc is a node's stable time step: half the cube root of its volume
// over its fastest wave speed.
const calcDtSrc = stateSrc + `
void mg_calc_dt(const double *v, const double *vol, double *dt) {
  struct mg_state s = mg_read(v[0], v[1], v[2], v[3], v[4]);
  *dt = 0.5 * (cbrt(*vol) / (sqrt(s.q) + s.c));
}`

const minDtSrc = `
void mg_min_dt(const double *dt, double *m) {
  if (*dt < *m) *m = *dt;
}`

// stepFactorSrc is a node's step factor: the smallest time step over its
// volume. (The original also computes the node's velocity, pressure and
// speed of sound here, and uses none of them.)
const stepFactorSrc = `
void mg_step_factor(const double *vol, const double *min_dt, double *sf) {
  *sf = *min_dt / *vol;
}`

// timeStepSrc is one Runge–Kutta stage: the variables from the stage's
// start plus its fraction of the step times the flux, which it zeroes.
const timeStepSrc = `
void mg_time_step(const int *stage, const double *sf, double *flux,
                  const double *old, double *v) {
  double k = *sf / (double)(3 + 1 - *stage);
  for (int i = 0; i < 5; i++) v[i] = old[i] + k * flux[i];
  for (int i = 0; i < 5; i++) flux[i] = 0.0;
}`

const residualSrc = `
void mg_residual(const double *old, const double *v, double *res) {
  for (int i = 0; i < 5; i++) res[i] = v[i] - old[i];
}`

const rmsSrc = `
void mg_rms(const double *res, double *sum) {
  for (int i = 0; i < 5; i++) *sum += res[i] * res[i];
}`

const badValsSrc = `
void mg_bad_vals(const double *v, int *count) {
  for (int i = 0; i < 5; i++)
    if (isnan(v[i]) || isinf(v[i])) *count += 1;
}`

// The restriction: each coarse node gets the mean of the variables of the
// fine nodes that map to it.
const restrictZeroSrc = `
void mg_restrict_zero(double *vc, int *n) {
  for (int i = 0; i < 5; i++) vc[i] = 0.0;
  *n = 0;
}`

const restrictSumSrc = `
void mg_restrict_sum(const double *v, double *vc, int *n) {
  for (int i = 0; i < 5; i++) vc[i] += v[i];
  *n += 1;
}`

const restrictMeanSrc = `
void mg_restrict_mean(double *v, const int *n) {
  double s = *n == 0 ? 1.0 : 1.0 / (double)*n;
  for (int i = 0; i < 5; i++) v[i] *= s;
}`

// prolongSrc corrects a fine node's variables by the difference of its
// coarse node's residual and its own, scaled by their distance (its
// length for density and energy, its components for the momentum).
const prolongSrc = `
void mg_prolong(double *v, const double *res, const double *x,
                const double *resc, const double *xc) {
  double dx = fabs(x[0] - xc[0]), dy = fabs(x[1] - xc[1]), dz = fabs(x[2] - xc[2]);
  double dm = sqrt(dx * dx + dy * dy + dz * dz);
  v[0] -= dm * (resc[0] - res[0]);
  v[1] -= dx * (resc[1] - res[1]);
  v[2] -= dy * (resc[2] - res[2]);
  v[3] -= dz * (resc[3] - res[3]);
  v[4] -= dm * (resc[4] - res[4]);
}`
