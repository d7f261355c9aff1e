/* train_mlp.c — a small, real training loop instrumented with mlprof.
 *
 * A multi-layer perceptron (input -> two ReLU hidden layers -> softmax) learns
 * to classify points drawn from a mixture of Gaussian blobs (several blobs per
 * class, so the classes are not linearly separable). Every step runs a real
 * input pipeline (shuffle, gather, augment with noise and small rotations,
 * per-batch normalisation), then forward, backward and an SGD-with-momentum
 * update; each phase is one mlprof range and the loss is a counter.
 *
 *   train_mlp [--steps N] [--batch N] [--hidden N] [--lr X] [--seed N] [--slow-data]
 *
 * The defaults (1500 steps, 128 hidden units) train for a few seconds of CPU
 * time: enough for 300+ CPU samples at the default 99 Hz, so the report's
 * shares mean something.
 *
 * --slow-data adds a simulated slow decoder to the input pipeline that takes
 * about three times as long as the step's compute, so data loading dominates
 * (the report should call the run input bound).
 * Exits 1 if the loss did not fall, 2 on bad arguments or out of memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlprof.h"

enum { FEATURES = 12, CLASSES = 6, BLOBS_PER_CLASS = 3, SAMPLES = 6144 };

typedef struct options {
  int steps, batch, hidden, slow_data;
  float lr, momentum;
  uint64_t seed;
} options;

/* ---- Random numbers (xorshift64*, Box-Muller) ---------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_u64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

static float rng_uniform(void) { return (float)((rng_u64() >> 40) * (1.0 / 16777216.0)); }

static float rng_normal(void) {
  float u = rng_uniform(), v = rng_uniform();
  if (u < 1e-7f) u = 1e-7f;
  return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

/* ---- Data set ------------------------------------------------------------ */

typedef struct dataset {
  float *x;  /* SAMPLES x FEATURES */
  int *y;    /* SAMPLES */
  int *perm; /* shuffled sample order of the current epoch */
  int cursor;
} dataset;

static int dataset_make(dataset *ds) {
  float centers[CLASSES * BLOBS_PER_CLASS][FEATURES];
  for (int c = 0; c < CLASSES * BLOBS_PER_CLASS; c++)
    for (int f = 0; f < FEATURES; f++) centers[c][f] = 1.5f * rng_normal();
  ds->x = malloc(sizeof(float) * SAMPLES * FEATURES);
  ds->y = malloc(sizeof(int) * SAMPLES);
  ds->perm = malloc(sizeof(int) * SAMPLES);
  if (!ds->x || !ds->y || !ds->perm) return -1;
  for (int i = 0; i < SAMPLES; i++) {
    int blob = (int)(rng_u64() % (CLASSES * BLOBS_PER_CLASS));
    ds->y[i] = blob % CLASSES;
    for (int f = 0; f < FEATURES; f++) ds->x[i * FEATURES + f] = centers[blob][f] + rng_normal();
    ds->perm[i] = i;
  }
  ds->cursor = SAMPLES;
  return 0;
}

static void dataset_free(dataset *ds) {
  free(ds->x);
  free(ds->y);
  free(ds->perm);
}

static void shuffle(int *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(rng_u64() % (uint64_t)(i + 1));
    int t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

/* One augmentation pass: small random rotations in feature pairs, then a
 * random gain and additive noise on every feature. */
static void augment(float *x, int n) {
  for (int i = 0; i < n; i++) {
    float *row = x + i * FEATURES;
    for (int f = 0; f + 1 < FEATURES; f += 2) {
      float a = 0.15f * rng_normal(), c = cosf(a), s = sinf(a);
      float u = row[f], v = row[f + 1];
      row[f] = c * u - s * v;
      row[f + 1] = s * u + c * v;
    }
    for (int f = 0; f < FEATURES; f++) row[f] = row[f] * (0.9f + 0.2f * rng_uniform()) + 0.1f * rng_normal();
  }
}

/* --slow-data: stands for an expensive decoder (images, audio) by running the
 * augmentation on a scratch copy of the batch again and again until `budget_s`
 * seconds have passed (at least once). The caller sets the budget to a
 * multiple of the last step's compute time, so data loading dominates in any
 * build (optimised, debug, sanitized). The checksum keeps the work alive. */
static double now_s(void);

static float slow_decode(const float *x, float *scratch, int n, double budget_s) {
  float check = 0;
  double end = now_s() + budget_s;
  do {
    memcpy(scratch, x, sizeof(float) * FEATURES * n);
    augment(scratch, n);
    check += scratch[0];
  } while (now_s() < end);
  return check;
}

/* Zero mean, unit variance per feature over the batch. */
static void normalise(float *x, int n) {
  for (int f = 0; f < FEATURES; f++) {
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) sum += x[i * FEATURES + f];
    double mean = sum / n;
    for (int i = 0; i < n; i++) {
      double d = x[i * FEATURES + f] - mean;
      sq += d * d;
    }
    float inv = (float)(1.0 / sqrt(sq / n + 1e-6));
    for (int i = 0; i < n; i++) x[i * FEATURES + f] = (float)((x[i * FEATURES + f] - mean) * inv);
  }
}

/* The input pipeline of one step: next indices, gather, augment, normalise. */
static float load_batch(dataset *ds, float *bx, float *scratch, int *by, int n, double slow_s) {
  float check = 0;
  for (int i = 0; i < n; i++) {
    if (ds->cursor >= SAMPLES) {
      shuffle(ds->perm, SAMPLES);
      ds->cursor = 0;
    }
    int k = ds->perm[ds->cursor++];
    memcpy(bx + i * FEATURES, ds->x + k * FEATURES, sizeof(float) * FEATURES);
    by[i] = ds->y[k];
  }
  if (slow_s > 0) check = slow_decode(bx, scratch, n, slow_s);
  augment(bx, n);
  normalise(bx, n);
  return check;
}

/* ---- Model --------------------------------------------------------------- */

typedef struct layer {
  int in, out;
  float *w, *b;   /* weights in x out, bias out */
  float *gw, *gb; /* gradients */
  float *vw, *vb; /* momentum */
} layer;

typedef struct model {
  layer l[3];
  float *act[4]; /* act[0] input, act[1..2] hidden (after ReLU), act[3] probabilities */
  float *grad[4];
  int batch;
} model;

static int layer_init(layer *l, int in, int out) {
  size_t nw = (size_t)in * out;
  l->in = in;
  l->out = out;
  l->w = calloc(nw, sizeof(float));
  l->gw = calloc(nw, sizeof(float));
  l->vw = calloc(nw, sizeof(float));
  l->b = calloc((size_t)out, sizeof(float));
  l->gb = calloc((size_t)out, sizeof(float));
  l->vb = calloc((size_t)out, sizeof(float));
  if (!l->w || !l->gw || !l->vw || !l->b || !l->gb || !l->vb) return -1;
  float scale = sqrtf(2.0f / (float)in); /* He initialisation for ReLU */
  for (size_t i = 0; i < nw; i++) l->w[i] = scale * rng_normal();
  return 0;
}

static void layer_free(layer *l) {
  free(l->w); free(l->gw); free(l->vw);
  free(l->b); free(l->gb); free(l->vb);
}

static int model_init(model *m, int hidden, int batch) {
  int sizes[4] = {FEATURES, hidden, hidden, CLASSES};
  memset(m, 0, sizeof *m);
  m->batch = batch;
  for (int i = 0; i < 3; i++)
    if (layer_init(&m->l[i], sizes[i], sizes[i + 1]) != 0) return -1;
  for (int i = 0; i < 4; i++) {
    m->act[i] = calloc((size_t)batch * sizes[i], sizeof(float));
    m->grad[i] = calloc((size_t)batch * sizes[i], sizeof(float));
    if (!m->act[i] || !m->grad[i]) return -1;
  }
  return 0;
}

static void model_free(model *m) {
  for (int i = 0; i < 3; i++) layer_free(&m->l[i]);
  for (int i = 0; i < 4; i++) { free(m->act[i]); free(m->grad[i]); }
}

/* y = x W + b for n rows. */
static void dense_forward(const layer *l, const float *x, float *y, int n) {
  for (int r = 0; r < n; r++) {
    float *yr = y + r * l->out;
    memcpy(yr, l->b, sizeof(float) * l->out);
    for (int i = 0; i < l->in; i++) {
      float xi = x[r * l->in + i];
      const float *wi = l->w + i * l->out;
      for (int o = 0; o < l->out; o++) yr[o] += xi * wi[o];
    }
  }
}

static void relu(float *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] < 0) v[i] = 0;
}

/* Softmax in place, row by row; returns the mean cross-entropy. */
static double softmax_xent(float *p, const int *y, int n) {
  double loss = 0;
  for (int r = 0; r < n; r++) {
    float *pr = p + r * CLASSES, mx = pr[0], sum = 0;
    for (int c = 1; c < CLASSES; c++) mx = pr[c] > mx ? pr[c] : mx;
    for (int c = 0; c < CLASSES; c++) { pr[c] = expf(pr[c] - mx); sum += pr[c]; }
    for (int c = 0; c < CLASSES; c++) pr[c] /= sum;
    loss -= log(pr[y[r]] > 1e-12f ? pr[y[r]] : 1e-12f);
  }
  return loss / n;
}

static double forward(model *m, const int *y, int n) {
  dense_forward(&m->l[0], m->act[0], m->act[1], n);
  relu(m->act[1], n * m->l[0].out);
  dense_forward(&m->l[1], m->act[1], m->act[2], n);
  relu(m->act[2], n * m->l[1].out);
  dense_forward(&m->l[2], m->act[2], m->act[3], n);
  return softmax_xent(m->act[3], y, n);
}

/* Given dL/dy in gy, accumulate dW, db and (if gx) dL/dx; x is the layer input. */
static void dense_backward(layer *l, const float *x, const float *gy, float *gx, int n) {
  memset(l->gw, 0, sizeof(float) * l->in * l->out);
  memset(l->gb, 0, sizeof(float) * l->out);
  for (int r = 0; r < n; r++) {
    const float *g = gy + r * l->out;
    for (int o = 0; o < l->out; o++) l->gb[o] += g[o];
    for (int i = 0; i < l->in; i++) {
      float xi = x[r * l->in + i], acc = 0;
      float *gwi = l->gw + i * l->out;
      const float *wi = l->w + i * l->out;
      for (int o = 0; o < l->out; o++) {
        gwi[o] += xi * g[o];
        acc += wi[o] * g[o];
      }
      if (gx) gx[r * l->in + i] = x[r * l->in + i] > 0 ? acc : 0; /* through the ReLU */
    }
  }
}

static void backward(model *m, const int *y, int n) {
  float *g = m->grad[3];
  for (int r = 0; r < n; r++)
    for (int c = 0; c < CLASSES; c++)
      g[r * CLASSES + c] = (m->act[3][r * CLASSES + c] - (c == y[r] ? 1.0f : 0.0f)) / (float)n;
  dense_backward(&m->l[2], m->act[2], m->grad[3], m->grad[2], n);
  dense_backward(&m->l[1], m->act[1], m->grad[2], m->grad[1], n);
  dense_backward(&m->l[0], m->act[0], m->grad[1], NULL, n);
}

static void sgd_update(float *w, float *v, const float *g, int n, float lr, float mom) {
  for (int i = 0; i < n; i++) {
    v[i] = mom * v[i] - lr * g[i];
    w[i] += v[i];
  }
}

static void optimizer_step(model *m, float lr, float mom) {
  for (int i = 0; i < 3; i++) {
    layer *l = &m->l[i];
    sgd_update(l->w, l->vw, l->gw, l->in * l->out, lr, mom);
    sgd_update(l->b, l->vb, l->gb, l->out, lr, mom);
  }
}

/* Loss and accuracy over the whole data set (normalised in batches, no augmentation). */
static void evaluate(model *m, const dataset *ds, double *loss, double *acc) {
  double total = 0;
  int correct = 0, done = 0;
  int *y = malloc(sizeof(int) * m->batch);
  if (!y) { *loss = INFINITY; *acc = 0; return; }
  while (done + m->batch <= SAMPLES) {
    memcpy(m->act[0], ds->x + done * FEATURES, sizeof(float) * FEATURES * m->batch);
    memcpy(y, ds->y + done, sizeof(int) * m->batch);
    normalise(m->act[0], m->batch);
    total += forward(m, y, m->batch) * m->batch;
    for (int r = 0; r < m->batch; r++) {
      const float *p = m->act[3] + r * CLASSES;
      int best = 0;
      for (int c = 1; c < CLASSES; c++) best = p[c] > p[best] ? c : best;
      correct += best == y[r];
    }
    done += m->batch;
  }
  free(y);
  *loss = done ? total / done : INFINITY;
  *acc = done ? (double)correct / done : 0;
}

/* ---- Driver -------------------------------------------------------------- */

static int parse_args(int argc, char **argv, options *o) {
  *o = (options){.steps = 1500, .batch = 64, .hidden = 128, .lr = 0.05f, .momentum = 0.9f, .seed = 42};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--slow-data")) { o->slow_data = 1; continue; }
    if (!strcmp(a, "--help") || !v) return -1;
    if (!strcmp(a, "--steps")) o->steps = atoi(v);
    else if (!strcmp(a, "--batch")) o->batch = atoi(v);
    else if (!strcmp(a, "--hidden")) o->hidden = atoi(v);
    else if (!strcmp(a, "--lr")) o->lr = (float)atof(v);
    else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
    else return -1;
    i++;
  }
  if (o->steps < 1 || o->batch < 2 || o->batch > SAMPLES || o->hidden < 1 || o->hidden > 4096 ||
      !(o->lr > 0))
    return -1;
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Keeps the slow decoder's checksum alive. */
static volatile float decode_sink;

/* Seconds the compute phases of the last step took (sets the --slow-data budget). */
static double last_compute_s = 1e-3;

/* ---- Model health logging (mlprof model section) ------------------------- */

/* Per step: batch accuracy and per-layer weight / gradient / activation
 * summaries (prof_histogram reads each tensor once and records only a
 * summary). Validation loss and accuracy are logged by run() under "val/". */
static void log_health(const model *m, const int *y, int n) {
  static const char *const wt[3] = {"fc1/weight", "fc2/weight", "fc3/weight"};
  static const char *const gt[3] = {"fc1/grad", "fc2/grad", "fc3/grad"};
  static const char *const at[2] = {"fc1/act", "fc2/act"};
  int right = 0;
  for (int r = 0; r < n; r++) {
    const float *p = m->act[3] + (size_t)r * CLASSES;
    int best = 0;
    for (int c = 1; c < CLASSES; c++) best = p[c] > p[best] ? c : best;
    right += best == y[r];
  }
  prof_scalar("train/accuracy", (double)right / n);
  for (int i = 0; i < 3; i++) {
    size_t nw = (size_t)m->l[i].in * m->l[i].out;
    prof_histogram(wt[i], PROF_HIST_WEIGHT, m->l[i].w, nw);
    prof_histogram(gt[i], PROF_HIST_GRADIENT, m->l[i].gw, nw);
  }
  for (int i = 0; i < 2; i++)
    prof_histogram(at[i], PROF_HIST_ACTIVATION, m->act[i + 1], (size_t)n * m->l[i].out);
}

static double train_step(model *m, dataset *ds, float *scratch, int *by, const options *o) {
  prof_start();
  prof_range_push_cat("data", PROF_CAT_DATA);
  decode_sink = load_batch(ds, m->act[0], scratch, by, o->batch, o->slow_data ? 3 * last_compute_s : 0);
  prof_range_pop();
  double t0 = now_s();
  prof_range_push("forward");
  double loss = forward(m, by, o->batch);
  prof_range_pop();
  prof_range_push("backward");
  backward(m, by, o->batch);
  prof_range_pop();
  prof_range_push("log_health");
  log_health(m, by, o->batch); /* gradients are ready, weights not yet updated */
  prof_range_pop();
  prof_range_push("optimizer");
  optimizer_step(m, o->lr, o->momentum);
  prof_range_pop();
  last_compute_s = now_s() - t0;
  prof_counter("loss", loss);
  prof_scalar("train/loss", loss);
  prof_stop();
  return loss;
}

static int run(const options *o) {
  dataset ds = {0};
  model m = {0};
  int *by = malloc(sizeof(int) * o->batch);
  float *scratch = malloc(sizeof(float) * FEATURES * o->batch);
  int rc = 2;
  if (!by || !scratch || dataset_make(&ds) != 0 || model_init(&m, o->hidden, o->batch) != 0) {
    fprintf(stderr, "train_mlp: out of memory\n");
    goto out;
  }
  double loss0, acc0, loss1, acc1, last = 0;
  evaluate(&m, &ds, &loss0, &acc0);
  printf("initial: loss %.4f  accuracy %.1f%%\n", loss0, 100 * acc0);
  double t0 = now_s();
  for (int s = 0; s < o->steps; s++) {
    last = train_step(&m, &ds, scratch, by, o);
    if ((s + 1) % 100 == 0) printf("step %d: batch loss %.4f\n", s + 1, last);
    if ((s + 1) % 100 == 0) { /* validation metrics for the model section */
      double vl, va;
      evaluate(&m, &ds, &vl, &va);
      prof_scalar("val/loss", vl);
      prof_scalar("val/accuracy", va);
    }
  }
  double t1 = now_s();
  evaluate(&m, &ds, &loss1, &acc1);
  printf("final:   loss %.4f  accuracy %.1f%%  (%d steps, %.3f s, %.3f ms/step)\n", loss1,
         100 * acc1, o->steps, t1 - t0, 1e3 * (t1 - t0) / o->steps);
  rc = loss1 < loss0 ? 0 : 1;
  if (rc) fprintf(stderr, "train_mlp: the loss did not fall\n");
out:
  model_free(&m);
  dataset_free(&ds);
  free(scratch);
  free(by);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  if (parse_args(argc, argv, &o) != 0) {
    fprintf(stderr, "usage: %s [--steps N] [--batch N] [--hidden N] [--lr X] [--seed N] "
                    "[--slow-data]\n", argv[0]);
    return 2;
  }
  rng_state ^= o.seed * 0xD1B54A32D192ED03ull;
  if (!rng_state) rng_state = 1;
  int err = prof_init(NULL);
  if (err != 0) fprintf(stderr, "train_mlp: profiler off: %s\n", prof_strerror(err));
  int rc = run(&o);
  const char *trace = prof_trace_path();
  if (trace) printf("trace: %s\n", trace);
  fflush(stdout);
  prof_shutdown();
  return rc;
}
