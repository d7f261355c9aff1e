/* cuda_train.cu — a small MLP trained on the GPU, for profiling with mlprof.
 *
 * Each step makes a synthetic batch on the host (range "load_batch",
 * category DATA), copies it to the device (range "h2d"), runs forward,
 * backward and SGD kernels (ranges "forward", "backward", "optimizer") and
 * reads the loss back. Options: --steps N (default 50), --batch N (256),
 * --hidden N (512), --pageable (copy from pageable instead of pinned host
 * memory). It prints its own counts (kernel launches, copies by direction
 * and host memory kind, memsets), so a second tool's counts can be compared
 * with mlprof's (scripts/gpu-check). Check options: --event-timing (sum of
 * kernel times measured with cudaEvents around each launch: slower),
 * --no-shutdown (exit without prof_shutdown), --fork-after-init (a forked
 * child that does CPU work only, after CUDA is initialised).
 */
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"

#define IN 784
#define OUT 10
#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "cuda_train: %s: %s\n", #x, cudaGetErrorString(e_));             \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static unsigned long launches, h2d_copies, d2h_copies, memsets;
static int event_timing;
static cudaEvent_t ev0, ev1;
static double event_ms;
#define LAUNCH(kernel, grid, block, ...)                          \
  do {                                                            \
    if (event_timing) cudaEventRecord(ev0);                       \
    kernel<<<(grid), (block)>>>(__VA_ARGS__);                     \
    if (event_timing) {                                           \
      float ms_ = 0.f;                                            \
      cudaEventRecord(ev1);                                       \
      cudaEventSynchronize(ev1);                                  \
      cudaEventElapsedTime(&ms_, ev0, ev1);                       \
      event_ms += ms_;                                            \
    }                                                             \
    launches++;                                                   \
  } while (0)

/* C[m x n] = A[m x k] * B[k x n] (row-major), optional transposes. */
__global__ void sgemm_naive(const float *A, const float *B, float *C, int m, int n, int k, int ta, int tb) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (int i = 0; i < k; i++) {
    float a = ta ? A[i * m + row] : A[row * k + i];
    float b = tb ? B[col * k + i] : B[i * n + col];
    acc += a * b;
  }
  C[row * n + col] = acc;
}

__global__ void bias_relu(float *x, const float *b, int rows, int cols, int relu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  float v = x[i] + b[i % cols];
  x[i] = relu && v < 0.f ? 0.f : v;
}

/* Softmax cross-entropy: gradient into logits, loss summed into *loss. */
__global__ void softmax_xent(float *logits, const int *labels, float *loss, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float *z = logits + r * OUT, mx = z[0], s = 0.f;
  for (int j = 1; j < OUT; j++) mx = fmaxf(mx, z[j]);
  for (int j = 0; j < OUT; j++) s += expf(z[j] - mx);
  for (int j = 0; j < OUT; j++) {
    float p = expf(z[j] - mx) / s;
    if (j == labels[r]) atomicAdd(loss, -logf(p + 1e-12f) / rows);
    z[j] = (p - (j == labels[r])) / rows;
  }
}

__global__ void relu_grad(float *g, const float *act, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && act[i] <= 0.f) g[i] = 0.f;
}

__global__ void col_sum(const float *g, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.f;
  for (int r = 0; r < rows; r++) s += g[r * cols + c];
  out[c] = s;
}

__global__ void sgd(float *w, const float *g, int n, float lr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

typedef struct net {
  int batch, hidden;
  float *w1, *b1, *w2, *b2, *gw1, *gb1, *gw2, *gb2, *x, *h, *z, *gh, *loss;
  int *y;
} net;

static float *dev_alloc(size_t n, int random) {
  float *p, *h = (float *)malloc(n * sizeof *h);
  for (size_t i = 0; i < n; i++) h[i] = random ? ((float)rand() / RAND_MAX - 0.5f) * 0.1f : 0.f;
  CHECK(cudaMalloc(&p, n * sizeof *p));
  CHECK(cudaMemcpy(p, h, n * sizeof *p, cudaMemcpyHostToDevice));
  free(h);
  return p;
}

static void net_init(net *n, int batch, int hidden) {
  n->batch = batch, n->hidden = hidden;
  n->w1 = dev_alloc((size_t)IN * hidden, 1), n->b1 = dev_alloc(hidden, 0);
  n->w2 = dev_alloc((size_t)hidden * OUT, 1), n->b2 = dev_alloc(OUT, 0);
  n->gw1 = dev_alloc((size_t)IN * hidden, 0), n->gb1 = dev_alloc(hidden, 0);
  n->gw2 = dev_alloc((size_t)hidden * OUT, 0), n->gb2 = dev_alloc(OUT, 0);
  n->x = dev_alloc((size_t)batch * IN, 0), n->h = dev_alloc((size_t)batch * hidden, 0);
  n->z = dev_alloc((size_t)batch * OUT, 0), n->gh = dev_alloc((size_t)batch * hidden, 0);
  n->loss = dev_alloc(1, 0);
  CHECK(cudaMalloc(&n->y, batch * sizeof(int)));
}

static dim3 grid2(int rows, int cols) { return dim3((cols + 15) / 16, (rows + 15) / 16); }
static int blocks(int n) { return (n + 255) / 256; }

static void forward(net *n) {
  int B = n->batch, H = n->hidden;
  LAUNCH(sgemm_naive, grid2(B, H), dim3(16, 16), n->x, n->w1, n->h, B, H, IN, 0, 0);
  LAUNCH(bias_relu, blocks(B * H), 256, n->h, n->b1, B, H, 1);
  LAUNCH(sgemm_naive, grid2(B, OUT), dim3(16, 16), n->h, n->w2, n->z, B, OUT, H, 0, 0);
  LAUNCH(bias_relu, blocks(B * OUT), 256, n->z, n->b2, B, OUT, 0);
  CHECK(cudaMemsetAsync(n->loss, 0, sizeof(float)));
  memsets++;
  LAUNCH(softmax_xent, blocks(B), 256, n->z, n->y, n->loss, B);
}

static void backward(net *n) {
  int B = n->batch, H = n->hidden;
  LAUNCH(sgemm_naive, grid2(H, OUT), dim3(16, 16), n->h, n->z, n->gw2, H, OUT, B, 1, 0);
  LAUNCH(col_sum, blocks(OUT), 256, n->z, n->gb2, B, OUT);
  LAUNCH(sgemm_naive, grid2(B, H), dim3(16, 16), n->z, n->w2, n->gh, B, H, OUT, 0, 1);
  LAUNCH(relu_grad, blocks(B * H), 256, n->gh, n->h, B * H);
  LAUNCH(sgemm_naive, grid2(IN, H), dim3(16, 16), n->x, n->gh, n->gw1, IN, H, B, 1, 0);
  LAUNCH(col_sum, blocks(H), 256, n->gh, n->gb1, B, H);
}

static void optimizer(net *n, float lr) {
  int H = n->hidden;
  LAUNCH(sgd, blocks(IN * H), 256, n->w1, n->gw1, IN * H, lr);
  LAUNCH(sgd, blocks(H), 256, n->b1, n->gb1, H, lr);
  LAUNCH(sgd, blocks(H * OUT), 256, n->w2, n->gw2, H * OUT, lr);
  LAUNCH(sgd, blocks(OUT), 256, n->b2, n->gb2, OUT, lr);
}

/* A synthetic batch: the label is the index of the brightest of 10 pixel bands. */
static void make_batch(float *x, int *y, int batch) {
  for (int r = 0; r < batch; r++) {
    int label = rand() % OUT;
    for (int i = 0; i < IN; i++) x[r * IN + i] = (float)rand() / RAND_MAX * 0.2f + (i % OUT == label ? 0.8f : 0.f);
    y[r] = label;
  }
}

int main(int argc, char **argv) {
  int steps = 50, batch = 256, hidden = 512, pageable = 0, no_shutdown = 0, fork_after = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--hidden") && i + 1 < argc) hidden = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--pageable")) pageable = 1;
    else if (!strcmp(argv[i], "--event-timing")) event_timing = 1;
    else if (!strcmp(argv[i], "--no-shutdown")) no_shutdown = 1;
    else if (!strcmp(argv[i], "--fork-after-init")) fork_after = 1;
  }
  prof_init(NULL);
  srand(1);
  net n;
  net_init(&n, batch, hidden);
  if (event_timing) {
    CHECK(cudaEventCreate(&ev0));
    CHECK(cudaEventCreate(&ev1));
  }
  if (fork_after) { /* CUDA is initialised: the child must not touch it, and the profiler must not either */
    pid_t pid = fork();
    if (pid == 0) {
      volatile double acc = 0;
      for (int i = 0; i < 1000000; i++) acc += i;
      _exit(acc < 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "cuda_train: forked child failed\n");
      return 1;
    }
  }
  size_t xb = (size_t)batch * IN * sizeof(float), yb = batch * sizeof(int);
  float *hx;
  int *hy;
  if (pageable) {
    hx = (float *)malloc(xb), hy = (int *)malloc(yb);
  } else {
    CHECK(cudaMallocHost(&hx, xb));
    CHECK(cudaMallocHost(&hy, yb));
  }
  float loss = 0.f;
  for (int s = 0; s < steps; s++) {
    prof_start();
    prof_range_push_cat("load_batch", PROF_CAT_DATA);
    make_batch(hx, hy, batch);
    prof_range_pop();
    prof_range_push("h2d");
    CHECK(cudaMemcpyAsync(n.x, hx, xb, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyAsync(n.y, hy, yb, cudaMemcpyHostToDevice));
    h2d_copies += 2;
    prof_range_pop();
    prof_range_push("forward");
    forward(&n);
    prof_range_pop();
    prof_range_push("backward");
    backward(&n);
    prof_range_pop();
    prof_range_push("optimizer");
    optimizer(&n, 0.1f);
    prof_range_pop();
    CHECK(cudaMemcpy(&loss, n.loss, sizeof loss, cudaMemcpyDeviceToHost)); /* synchronises */
    d2h_copies++;
    prof_counter("loss", loss);
    prof_stop();
  }
  CHECK(cudaDeviceSynchronize());
  printf("cuda_train: %d steps, final loss %.4f, kernel launches %lu\n", steps, loss, launches);
  /* h2d copies come from pinned memory unless --pageable; the d2h loss copy lands in pageable memory */
  printf("cuda_train: h2d copies %lu (%s), d2h copies %lu (pageable), memsets %lu\n", h2d_copies,
         pageable ? "pageable" : "pinned", d2h_copies, memsets);
  if (event_timing) printf("cuda_train: event-timed kernel time %.0f ns\n", event_ms * 1e6);
  if (no_shutdown) return 0; /* atexit and the context-destroy flush must still save the tail */
  prof_shutdown(); /* before CUDA tears down, so CUPTI's last buffers are flushed */
  return 0;
}
