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

// stateSrc is a macro shared by the flux kernels: the velocity, squared
// speed, pressure and speed of sound of a node's variables V, and its
// Euler fluxes: momentum component i along direction d is
// u[min(i,d)]·m[max(i,d)] (+p when i = d), energy along d is u[d]·(E+p).
const stateSrc = `
#define MG_GAMMA 1.4
#define MG_STATE(V, r, m, e, u, q, p, c, FM, FE) \
  double r = (V)[0], e = (V)[4]; \
  double m[3] = {(V)[1], (V)[2], (V)[3]}; \
  double u[3] = {m[0] / r, m[1] / r, m[2] / r}; \
  double q = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]; \
  double p = (MG_GAMMA - 1.0) * (e - 0.5 * r * q); \
  double c = sqrt(MG_GAMMA * p / r); \
  double FM[3][3], FE[3]; \
  for (int i_ = 0; i_ < 3; i_++) { \
    for (int d_ = 0; d_ < 3; d_++) { \
      int lo_ = i_ < d_ ? i_ : d_, hi_ = i_ < d_ ? d_ : i_; \
      FM[i_][d_] = u[lo_] * m[hi_]; \
    } \
    FM[i_][i_] += p; \
    FE[i_] = u[i_] * (e + p); \
  }
`

// fluxEdgeSrc adds an edge's flux to its two nodes: the central flux
// through the edge's dual face plus a scalar dissipation proportional to
// the face's area and the largest wave speeds.
const fluxEdgeSrc = stateSrc + `
void mg_flux_edge(const double *va, const double *vb, const double *w,
                  double *fa, double *fb) {
  double len = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  MG_STATE(vb, rb, mb, eb, ub, qb, pb, cb, Fb, Gb)
  MG_STATE(va, ra, ma, ea, ua, qa, pa, ca, Fa, Ga)
  double sa = sqrt(qa), sb = sqrt(qb);
  double ka = -len * mg_smooth * 0.5 * (sa + sqrt(qb) + ca + cb);
  double kb = -len * mg_smooth * 0.5 * (sb + sqrt(qa) + cb + ca);
  double g[3] = {-0.5 * w[0], -0.5 * w[1], -0.5 * w[2]};
  fa[0] += ka * (ra - rb) + g[0] * (ma[0] + mb[0]) + g[1] * (ma[1] + mb[1]) + g[2] * (ma[2] + mb[2]);
  fa[4] += ka * (ea - eb) + g[0] * (Ga[0] + Gb[0]) + g[1] * (Ga[1] + Gb[1]) + g[2] * (Ga[2] + Gb[2]);
  for (int i = 0; i < 3; i++)
    fa[1 + i] += ka * (ma[i] - mb[i]) + g[0] * (Fa[i][0] + Fb[i][0]) +
                 g[1] * (Fa[i][1] + Fb[i][1]) + g[2] * (Fa[i][2] + Fb[i][2]);
  fb[0] += kb * (rb - ra) - g[0] * (ma[0] + mb[0]) - g[1] * (ma[1] + mb[1]) - g[2] * (ma[2] + mb[2]);
  fb[4] += kb * (eb - ea) - g[0] * (Ga[0] + Gb[0]) - g[1] * (Ga[1] + Gb[1]) - g[2] * (Ga[2] + Gb[2]);
  for (int i = 0; i < 3; i++)
    fb[1 + i] += kb * (mb[i] - ma[i]) - g[0] * (Fa[i][0] + Fb[i][0]) -
                 g[1] * (Fa[i][1] + Fb[i][1]) - g[2] * (Fa[i][2] + Fb[i][2]);
}`

// fluxBndSrc adds a boundary node's flux: groups up to 2 are solid
// surfaces (the pressure on the face), 3 to 7 far field (the mean of the
// node's flux and the free stream's through the face).
const fluxBndSrc = stateSrc + `
void mg_flux_bnd(const int *grp, const double *w, const double *v, double *f) {
  MG_STATE(v, r, m, e, u, q, p, c, F, G)
  if (*grp <= 2) {
    f[0] += 0.0;
    f[1] += w[0] * p;
    f[2] += w[1] * p;
    f[3] += w[2] * p;
    f[4] += 0.0;
  } else if (*grp <= 7) {
    double h[3] = {0.5 * w[0], 0.5 * w[1], 0.5 * w[2]};
    f[0] += h[0] * (mg_ff[1] + m[0]) + h[1] * (mg_ff[2] + m[1]) + h[2] * (mg_ff[3] + m[2]);
    f[4] += h[0] * (mg_ff_flux[9] + G[0]) + h[1] * (mg_ff_flux[10] + G[1]) + h[2] * (mg_ff_flux[11] + G[2]);
    for (int i = 0; i < 3; i++)
      f[1 + i] += h[0] * (mg_ff_flux[3 * i] + F[i][0]) + h[1] * (mg_ff_flux[3 * i + 1] + F[i][1]) +
                  h[2] * (mg_ff_flux[3 * i + 2] + F[i][2]);
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
const calcDtSrc = `
void mg_calc_dt(const double *v, const double *vol, double *dt) {
  double r = v[0];
  double u0 = v[1] / r, u1 = v[2] / r, u2 = v[3] / r;
  double q = u0 * u0 + u1 * u1 + u2 * u2;
  double p = (1.4 - 1.0) * (v[4] - 0.5 * r * q);
  double c = sqrt(1.4 * p / r);
  *dt = 0.5 * (cbrt(*vol) / (sqrt(q) + c));
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
