package airfoil

// The five Airfoil kernels, in C, as GoOP2 compiles them. They use the
// constants gam, gm1, cfl, eps and qinf declared by the driver.

const saveSolnSrc = `
void save_soln(const double *q, double *qold) {
  for (int n = 0; n < 4; n++) qold[n] = q[n];
}`

const adtCalcSrc = `
void adt_calc(const double *x1, const double *x2, const double *x3,
              const double *x4, const double *q, double *adt) {
  double ri = 1.0 / q[0];
  double u = ri * q[1];
  double v = ri * q[2];
  double c = sqrt(gam * gm1 * (ri * q[3] - 0.5 * (u * u + v * v)));
  double dx, dy, a;
  dx = x2[0] - x1[0]; dy = x2[1] - x1[1];
  a = fabs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy);
  dx = x3[0] - x2[0]; dy = x3[1] - x2[1];
  a += fabs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy);
  dx = x4[0] - x3[0]; dy = x4[1] - x3[1];
  a += fabs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy);
  dx = x1[0] - x4[0]; dy = x1[1] - x4[1];
  a += fabs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy);
  *adt = a / cfl;
}`

const resCalcSrc = `
void res_calc(const double *x1, const double *x2, const double *q1,
              const double *q2, const double *adt1, const double *adt2,
              double *res1, double *res2) {
  double dx = x1[0] - x2[0];
  double dy = x1[1] - x2[1];
  double ri = 1.0 / q1[0];
  double p1 = gm1 * (q1[3] - 0.5 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
  double vol1 = ri * (q1[1] * dy - q1[2] * dx);
  ri = 1.0 / q2[0];
  double p2 = gm1 * (q2[3] - 0.5 * ri * (q2[1] * q2[1] + q2[2] * q2[2]));
  double vol2 = ri * (q2[1] * dy - q2[2] * dx);
  double mu = 0.5 * ((*adt1) + (*adt2)) * eps;
  double f;
  f = 0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]);
  res1[0] += f; res2[0] -= f;
  f = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]);
  res1[1] += f; res2[1] -= f;
  f = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]);
  res1[2] += f; res2[2] -= f;
  f = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]);
  res1[3] += f; res2[3] -= f;
}`

const bresCalcSrc = `
void bres_calc(const double *x1, const double *x2, const double *q1,
               const double *adt1, double *res1, const int *bound) {
  double dx = x1[0] - x2[0];
  double dy = x1[1] - x2[1];
  double ri = 1.0 / q1[0];
  double p1 = gm1 * (q1[3] - 0.5 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
  if (*bound == 1) {
    res1[1] += +p1 * dy;
    res1[2] += -p1 * dx;
    return;
  }
  double vol1 = ri * (q1[1] * dy - q1[2] * dx);
  ri = 1.0 / qinf[0];
  double p2 = gm1 * (qinf[3] - 0.5 * ri * (qinf[1] * qinf[1] + qinf[2] * qinf[2]));
  double vol2 = ri * (qinf[1] * dy - qinf[2] * dx);
  double mu = (*adt1) * eps;
  double f;
  f = 0.5 * (vol1 * q1[0] + vol2 * qinf[0]) + mu * (q1[0] - qinf[0]);
  res1[0] += f;
  f = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * qinf[1] + p2 * dy) + mu * (q1[1] - qinf[1]);
  res1[1] += f;
  f = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * qinf[2] - p2 * dx) + mu * (q1[2] - qinf[2]);
  res1[2] += f;
  f = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (qinf[3] + p2)) + mu * (q1[3] - qinf[3]);
  res1[3] += f;
}`

const updateSrc = `
void update(const double *qold, double *q, double *res, const double *adt,
            double *rms) {
  double adti = 1.0 / (*adt);
  for (int n = 0; n < 4; n++) {
    double del = adti * res[n];
    q[n] = qold[n] - del;
    res[n] = 0.0;
    *rms += del * del;
  }
}`
