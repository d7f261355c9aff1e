/* mpi_train.c — data-parallel training under MPI, instrumented with mlprof.
 *
 * Every rank holds the same small MLP (inputs -> tanh hidden layer -> one
 * output) and learns y = sin(a·x) on its own shard of synthetic data: each
 * step loads a batch (a DATA range), computes gradients (COMPUTE), averages
 * them across ranks with one MPI_Allreduce (recorded by libmlprof_mpi) and
 * applies the SGD update. Rank 0's initial weights reach the others with one
 * MPI_Bcast; the final loss is averaged with one more MPI_Allreduce.
 *
 *   mpi_train [--steps N] [--batch N] [--hidden N] [--slow-rank R] [--slow-factor F]
 *
 * --slow-rank R makes rank R compute each gradient F times (default 4), as
 * a rank on a slower device would: the others wait for it in MPI_Allreduce.
 * At the end every rank prints one line of what it asked MPI to do:
 *   mpi_train: rank R allreduce_calls N allreduce_bytes B bcast_calls N bcast_bytes B
 * Exits 1 if the loss did not fall, 2 on bad arguments.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"

enum { INPUTS = 16 };

typedef struct options {
  int steps, batch, hidden, slow_rank, slow_factor;
} options;

typedef struct net {
  int h;
  size_t nparams;
  float *p, *g;     /* parameters and gradients: w1[h][INPUTS], b1[h], w2[h], b2 */
  float *hid, *x, *y;
} net;

typedef struct counts {
  uint64_t allreduce_calls, allreduce_bytes, bcast_calls, bcast_bytes;
} counts;

static uint64_t rng = 1;

static float uniform(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (float)(((rng * 0x2545F4914F6CDD1Dull) >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.steps = 30, .batch = 256, .hidden = 128, .slow_rank = -1, .slow_factor = 4};
  for (int i = 1; i < argc; i++) {
    int *dst = !strcmp(argv[i], "--steps")         ? &o->steps
               : !strcmp(argv[i], "--batch")       ? &o->batch
               : !strcmp(argv[i], "--hidden")      ? &o->hidden
               : !strcmp(argv[i], "--slow-rank")   ? &o->slow_rank
               : !strcmp(argv[i], "--slow-factor") ? &o->slow_factor
                                                   : NULL;
    if (!dst || i + 1 >= argc) return -1;
    *dst = atoi(argv[++i]);
  }
  return o->steps > 0 && o->batch > 0 && o->hidden > 0 && o->slow_factor > 0 ? 0 : -1;
}

static int net_init(net *n, int h, int batch) {
  n->h = h;
  n->nparams = (size_t)h * INPUTS + 2 * (size_t)h + 1;
  n->p = calloc(n->nparams, sizeof *n->p);
  n->g = calloc(n->nparams, sizeof *n->g);
  n->hid = calloc((size_t)h, sizeof *n->hid);
  n->x = calloc((size_t)batch * INPUTS, sizeof *n->x);
  n->y = calloc((size_t)batch, sizeof *n->y);
  if (!n->p || !n->g || !n->hid || !n->x || !n->y) return -1;
  for (size_t i = 0; i < n->nparams; i++) n->p[i] = uniform() * 0.3f;
  return 0;
}

static void net_free(net *n) {
  free(n->p);
  free(n->g);
  free(n->hid);
  free(n->x);
  free(n->y);
}

/* The batch of this rank: points in [-1,1]^INPUTS, target sin(sum x_i / 2). */
static void load_batch(net *n, int batch) {
  for (int b = 0; b < batch; b++) {
    float s = 0;
    for (int i = 0; i < INPUTS; i++) {
      n->x[b * INPUTS + i] = uniform();
      s += n->x[b * INPUTS + i];
    }
    n->y[b] = sinf(s * 0.5f);
  }
}

/* Forward and backward over the batch; gradients of the mean squared error. */
static double gradients(net *n, int batch) {
  int h = n->h;
  float *w1 = n->p, *b1 = w1 + (size_t)h * INPUTS, *w2 = b1 + h, *b2 = w2 + h;
  float *g1 = n->g, *gb1 = g1 + (size_t)h * INPUTS, *gw2 = gb1 + h, *gb2 = gw2 + h;
  memset(n->g, 0, n->nparams * sizeof *n->g);
  double loss = 0;
  for (int b = 0; b < batch; b++) {
    const float *x = n->x + b * INPUTS;
    float out = *b2;
    for (int j = 0; j < h; j++) {
      float a = b1[j];
      for (int i = 0; i < INPUTS; i++) a += w1[j * INPUTS + i] * x[i];
      n->hid[j] = tanhf(a);
      out += w2[j] * n->hid[j];
    }
    float d = (out - n->y[b]) / (float)batch;
    loss += (double)(out - n->y[b]) * (out - n->y[b]) / batch;
    *gb2 += d;
    for (int j = 0; j < h; j++) {
      gw2[j] += d * n->hid[j];
      float dh = d * w2[j] * (1 - n->hid[j] * n->hid[j]);
      gb1[j] += dh;
      for (int i = 0; i < INPUTS; i++) g1[j * INPUTS + i] += dh * x[i];
    }
  }
  return loss;
}

static void allreduce_mean(float *v, int count, int size, counts *c) {
  MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  c->allreduce_calls++;
  c->allreduce_bytes += (uint64_t)count * sizeof(float);
  for (int i = 0; i < count; i++) v[i] /= (float)size;
}

static double train_step(net *n, const options *o, int rank, int size, counts *c) {
  prof_start();
  prof_range_push_cat("load_batch", PROF_CAT_DATA);
  load_batch(n, o->batch);
  prof_range_pop();
  prof_range_push("forward_backward");
  int reps = rank == o->slow_rank ? o->slow_factor : 1;
  double loss = 0;
  for (int r = 0; r < reps; r++) loss = gradients(n, o->batch);
  prof_range_pop();
  allreduce_mean(n->g, (int)n->nparams, size, c);
  prof_range_push("sgd_update");
  for (size_t i = 0; i < n->nparams; i++) n->p[i] -= 0.05f * n->g[i];
  prof_range_pop();
  prof_stop();
  return loss;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  net n;
  counts c = {0};
  if (parse(argc, argv, &o) != 0) {
    if (rank == 0) fprintf(stderr, "usage: mpi_train [--steps N] [--batch N] [--hidden N] [--slow-rank R] [--slow-factor F]\n");
    MPI_Finalize();
    return 2;
  }
  rng = 0x9E3779B97F4A7C15ull + (uint64_t)rank * 7919;
  if (net_init(&n, o.hidden, o.batch) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Bcast(n.p, (int)n.nparams, MPI_FLOAT, 0, MPI_COMM_WORLD);
  c.bcast_calls++;
  c.bcast_bytes += n.nparams * sizeof(float);
  double first = 0, last = 0;
  for (int s = 0; s < o.steps; s++) {
    last = train_step(&n, &o, rank, size, &c);
    if (s == 0) first = last;
  }
  float mean[2] = {(float)first, (float)last};
  allreduce_mean(mean, 2, size, &c);
  printf("mpi_train: rank %d allreduce_calls %llu allreduce_bytes %llu bcast_calls %llu bcast_bytes %llu\n", rank,
         (unsigned long long)c.allreduce_calls, (unsigned long long)c.allreduce_bytes,
         (unsigned long long)c.bcast_calls, (unsigned long long)c.bcast_bytes);
  if (rank == 0) printf("mpi_train: loss %.4f -> %.4f over %d ranks\n", mean[0], mean[1], size);
  net_free(&n);
  MPI_Finalize();
  return mean[1] < mean[0] ? 0 : 1;
}
