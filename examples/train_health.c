/* train_health.c — a training run with a planted problem, to see mlprof's
 * model-health findings at work.
 *
 * A deep stack of sigmoid layers (12 x 32, small uniform initialisation)
 * learns a toy binary task. Each sigmoid scales the gradient by at most
 * 0.25, so the early layers receive gradients orders of magnitude smaller
 * than the late ones: the report finds `vanishing_gradient` (and the loss
 * barely moves: `plateau`). With --diverge the learning rate is so large
 * that the loss overflows to Inf/NaN: the report finds `nan_inf` with the
 * first bad step. Every step logs train/loss, train/accuracy and per-layer
 * weight, gradient and activation histograms; val/loss every 25 steps.
 *
 * usage: train_health [--steps N] [--diverge]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"

#define LAYERS 12
#define WIDTH 32
#define IN 16
#define BATCH 64

static uint64_t rng = 0x243F6A8885A308D3ull;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}
static double normal(void) {
  double u = uniform() + 1e-12, v = uniform();
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct net {
  int in[LAYERS + 1], out[LAYERS + 1];
  float *w[LAYERS + 1], *b[LAYERS + 1], *gw[LAYERS + 1], *gb[LAYERS + 1];
  float *a[LAYERS + 2]; /* a[0] input, a[l+1] output of layer l */
  float *d[LAYERS + 1]; /* dL/dz of layer l */
} net;

static const char *const WTAG[] = {"l00/weight", "l01/weight", "l02/weight", "l03/weight", "l04/weight",
                                   "l05/weight", "l06/weight", "l07/weight", "l08/weight", "l09/weight",
                                   "l10/weight", "l11/weight", "out/weight"};
static const char *const GTAG[] = {"l00/grad", "l01/grad", "l02/grad", "l03/grad", "l04/grad",
                                   "l05/grad", "l06/grad", "l07/grad", "l08/grad", "l09/grad",
                                   "l10/grad", "l11/grad", "out/grad"};
static const char *const ATAG[] = {"l00/act", "l01/act", "l02/act", "l03/act", "l04/act", "l05/act",
                                   "l06/act", "l07/act", "l08/act", "l09/act", "l10/act", "l11/act", "out/act"};

static int net_init(net *n) {
  memset(n, 0, sizeof *n);
  n->a[0] = calloc(BATCH * IN, sizeof(float));
  for (int l = 0; l <= LAYERS; l++) {
    n->in[l] = l ? WIDTH : IN;
    n->out[l] = l == LAYERS ? 1 : WIDTH;
    size_t nw = (size_t)n->in[l] * n->out[l];
    n->w[l] = malloc(nw * sizeof(float));
    n->gw[l] = calloc(nw, sizeof(float));
    n->b[l] = calloc((size_t)n->out[l], sizeof(float));
    n->gb[l] = calloc((size_t)n->out[l], sizeof(float));
    n->a[l + 1] = calloc((size_t)BATCH * n->out[l], sizeof(float));
    n->d[l] = calloc((size_t)BATCH * n->out[l], sizeof(float));
    if (!n->w[l] || !n->gw[l] || !n->b[l] || !n->gb[l] || !n->a[l + 1] || !n->d[l]) return -1;
    double r = 1.0 / sqrt((double)n->in[l]); /* the classic small uniform init */
    for (size_t i = 0; i < nw; i++) n->w[l][i] = (float)((2 * uniform() - 1) * r);
  }
  return n->a[0] ? 0 : -1;
}

static void net_free(net *n) {
  free(n->a[0]);
  for (int l = 0; l <= LAYERS; l++) {
    free(n->w[l]), free(n->gw[l]), free(n->b[l]), free(n->gb[l]), free(n->a[l + 1]), free(n->d[l]);
  }
}

static void batch(float *x, float *y) {
  for (int r = 0; r < BATCH; r++) {
    double s = 0;
    for (int i = 0; i < IN; i++) {
      x[r * IN + i] = (float)normal();
      if (i < 4) s += x[r * IN + i];
    }
    y[r] = s > 0;
  }
}

static float sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

/* Forward; returns the mean binary cross-entropy (no clamping: a saturated
 * output gives Inf, as in a careless implementation). */
static double forward(net *n, const float *y, double *acc) {
  for (int l = 0; l <= LAYERS; l++)
    for (int r = 0; r < BATCH; r++)
      for (int o = 0; o < n->out[l]; o++) {
        float z = n->b[l][o];
        for (int i = 0; i < n->in[l]; i++) z += n->a[l][r * n->in[l] + i] * n->w[l][i * n->out[l] + o];
        n->a[l + 1][r * n->out[l] + o] = sigmoid(z);
      }
  double loss = 0;
  int right = 0;
  for (int r = 0; r < BATCH; r++) {
    float p = n->a[LAYERS + 1][r];
    loss -= y[r] ? log(p) : log(1 - p);
    right += (p > 0.5f) == (y[r] > 0.5f);
  }
  *acc = (double)right / BATCH;
  return loss / BATCH;
}

static void backward(net *n, const float *y) {
  for (int r = 0; r < BATCH; r++) n->d[LAYERS][r] = (n->a[LAYERS + 1][r] - y[r]) / BATCH;
  for (int l = LAYERS; l >= 0; l--) {
    memset(n->gw[l], 0, sizeof(float) * n->in[l] * n->out[l]);
    memset(n->gb[l], 0, sizeof(float) * n->out[l]);
    for (int r = 0; r < BATCH; r++)
      for (int o = 0; o < n->out[l]; o++) {
        float g = n->d[l][r * n->out[l] + o];
        n->gb[l][o] += g;
        for (int i = 0; i < n->in[l]; i++) n->gw[l][i * n->out[l] + o] += g * n->a[l][r * n->in[l] + i];
      }
    if (l == 0) break;
    for (int r = 0; r < BATCH; r++)
      for (int i = 0; i < n->in[l]; i++) {
        float s = 0, a = n->a[l][r * n->in[l] + i];
        for (int o = 0; o < n->out[l]; o++) s += n->w[l][i * n->out[l] + o] * n->d[l][r * n->out[l] + o];
        n->d[l - 1][r * n->in[l] + i] = s * a * (1 - a);
      }
  }
}

static void update(net *n, float lr) {
  for (int l = 0; l <= LAYERS; l++) {
    for (int i = 0; i < n->in[l] * n->out[l]; i++) n->w[l][i] -= lr * n->gw[l][i];
    for (int o = 0; o < n->out[l]; o++) n->b[l][o] -= lr * n->gb[l][o];
  }
}

static void log_tensors(const net *n) {
  for (int l = 0; l <= LAYERS; l++) {
    size_t nw = (size_t)n->in[l] * n->out[l];
    prof_histogram(WTAG[l], PROF_HIST_WEIGHT, n->w[l], nw);
    prof_histogram(GTAG[l], PROF_HIST_GRADIENT, n->gw[l], nw);
    prof_histogram(ATAG[l], PROF_HIST_ACTIVATION, n->a[l + 1], (size_t)BATCH * n->out[l]);
  }
}

int main(int argc, char **argv) {
  int steps = 300, diverge = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--diverge") == 0) diverge = 1;
    else {
      fprintf(stderr, "usage: %s [--steps N] [--diverge]\n", argv[0]);
      return 2;
    }
  }
  if (steps < 1) steps = 1;
  net n;
  float *y = malloc(BATCH * sizeof(float));
  if (!y || net_init(&n) != 0) {
    fprintf(stderr, "train_health: out of memory\n");
    return 2;
  }
  float lr = diverge ? 400.0f : 0.5f;
  prof_init(NULL);
  double loss = 0, acc = 0;
  for (int s = 0; s < steps; s++) {
    prof_start();
    batch(n.a[0], y);
    prof_range_push("forward");
    loss = forward(&n, y, &acc);
    prof_range_pop();
    prof_range_push("backward");
    backward(&n, y);
    prof_range_pop();
    prof_scalar("train/loss", loss);
    prof_scalar("train/accuracy", acc);
    prof_scalar("lr", lr);
    log_tensors(&n);
    prof_range_push("update");
    update(&n, lr);
    prof_range_pop();
    prof_stop();
    if (s % 25 == 24) { /* a fresh batch stands in for a validation set */
      double vacc;
      batch(n.a[0], y);
      prof_scalar("val/loss", forward(&n, y, &vacc));
      prof_scalar("val/accuracy", vacc);
    }
    if (s % 50 == 49) printf("step %d: loss %.4f accuracy %.2f\n", s + 1, loss, acc);
  }
  const char *trace = prof_trace_path();
  if (trace) printf("trace: %s (see the model-health findings in %s.report.txt)\n", trace, trace);
  fflush(stdout);
  prof_shutdown();
  net_free(&n);
  free(y);
  return 0;
}
