/* test_procfile.c — /proc files read with one system call (core/
 * procfile.h): a kept descriptor read again at offset 0 sees the kernel's
 * current text, errors close it, and the process's RSS reader follows the
 * heap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/procfile.h"

static uint64_t statm_resident(prof__procfile *f) {
  char buf[128];
  long n = prof__procfile_read(f, "/proc/self/statm", buf, sizeof buf);
  assert_true(n > 0);
  assert_int_equal(buf[n], 0);
  unsigned long long size = 0, res = 0;
  assert_int_equal(sscanf(buf, "%llu %llu", &size, &res), 2);
  return res;
}

static void kept_descriptor_sees_current_text(void **state) {
  (void)state;
  prof__procfile f = {0};
  uint64_t before = statm_resident(&f);
  int fd1 = f.fd1;
  assert_true(fd1 > 0);
  size_t len = 64u << 20;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  memset(p, 1, len); /* 16384 resident pages more */
  uint64_t after = statm_resident(&f);
  assert_int_equal(f.fd1, fd1); /* the same descriptor, read again */
  assert_true(after >= before + (len / (size_t)sysconf(_SC_PAGESIZE)) * 9 / 10);
  munmap(p, len);
  prof__procfile_close(&f);
  assert_int_equal(f.fd1, 0);
  prof__procfile_close(&f); /* twice: harmless */
}

static void rss_follows_the_heap(void **state) {
  (void)state;
  uint64_t before = prof__proc_rss();
  assert_true(before > 1024 * 1024);
  size_t len = 48u << 20;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  memset(p, 1, len);
  assert_true(prof__proc_rss() >= before + len * 9 / 10);
  munmap(p, len);
}

static void missing_file_and_bad_arguments(void **state) {
  (void)state;
  prof__procfile f = {0};
  char buf[16];
  assert_int_equal(prof__procfile_read(&f, "/proc/self/no-such-file", buf, sizeof buf), -1);
  assert_int_equal(f.fd1, 0);
  assert_int_equal(prof__procfile_read(NULL, "/proc/self/statm", buf, sizeof buf), -1);
  assert_int_equal(prof__procfile_read(&f, "/proc/self/statm", buf, 1), -1);
  /* A short buffer keeps cap - 1 bytes and the terminator. */
  long n = prof__procfile_read(&f, "/proc/self/stat", buf, 5);
  assert_int_equal(n, 4);
  assert_int_equal(strlen(buf), 4);
  prof__procfile_close(&f);
}

typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int tid, go;
} gate;

static void *wait_at_gate(void *arg) {
  gate *g = arg;
  pthread_mutex_lock(&g->mu);
  g->tid = (int)syscall(SYS_gettid);
  pthread_cond_broadcast(&g->cv);
  while (!g->go) pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
  return NULL;
}

static void exited_thread_closes_the_descriptor(void **state) {
  (void)state;
  gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, wait_at_gate, &g), 0);
  pthread_mutex_lock(&g.mu);
  while (!g.tid) pthread_cond_wait(&g.cv, &g.mu);
  pthread_mutex_unlock(&g.mu);
  /* Opened while the thread lives ... */
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", g.tid);
  prof__procfile f = {0};
  assert_true(prof__procfile_read(&f, path, buf, sizeof buf) > 0);
  assert_true(f.fd1 > 0);
  pthread_mutex_lock(&g.mu);
  g.go = 1;
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.mu);
  assert_int_equal(pthread_join(th, NULL), 0);
  /* ... read after it is gone: an error, and the descriptor is closed.
   * join returns once the thread cleared its tid; the kernel releases the
   * task a moment later, so wait for that (bounded). */
  long n = 0;
  for (int i = 0; i < 200 && (n = prof__procfile_read(&f, path, buf, sizeof buf)) >= 0; i++) usleep(10000);
  assert_int_equal(n, -1);
  assert_int_equal(f.fd1, 0);
}

/* The program closes the descriptor behind mlprof's back and gets the same
 * number for a pipe of its own: that pipe is neither read nor closed, and
 * the file is opened again on the next read. */
static void reused_descriptor_is_left_to_the_program(void **state) {
  (void)state;
  prof__procfile f = {0};
  char buf[256];
  assert_true(prof__procfile_read(&f, "/proc/self/statm", buf, sizeof buf) > 0);
  int fd = f.fd1 - 1;
  int p[2];
  assert_int_equal(pipe(p), 0);
  assert_int_equal(dup2(p[0], fd), fd); /* closes the kept descriptor, the pipe takes its number */
  assert_int_equal(write(p[1], "x", 1), 1);
  assert_int_equal(prof__procfile_read(&f, "/proc/self/statm", buf, sizeof buf), -1);
  assert_int_equal(f.fd1, 0);
  char c = 0;
  assert_int_equal(read(fd, &c, 1), 1); /* still open, nothing consumed */
  assert_int_equal(c, 'x');
  prof__procfile_close(&f); /* nothing of ours to close */
  assert_int_equal(write(p[1], "y", 1), 1);
  assert_int_equal(read(fd, &c, 1), 1);
  assert_int_equal(c, 'y');
  /* opened again, on another number */
  assert_true(prof__procfile_read(&f, "/proc/self/statm", buf, sizeof buf) > 0);
  assert_true(f.fd1 > 0 && f.fd1 - 1 != fd);
  /* the same through the stat form, for a directory */
  prof__procfile d = {0};
  struct stat st;
  assert_int_equal(prof__procfile_stat(&d, "/proc/self/task", &st), 0);
  assert_true(S_ISDIR(st.st_mode) && st.st_nlink >= 3);
  int dfd = d.fd1 - 1;
  assert_int_equal(dup2(p[1], dfd), dfd);
  assert_int_equal(prof__procfile_stat(&d, "/proc/self/task", &st), -1);
  assert_int_equal(d.fd1, 0);
  assert_int_equal(write(dfd, "z", 1), 1); /* the program's pipe end, still open */
  assert_int_equal(read(fd, &c, 1), 1);
  assert_int_equal(c, 'z');
  prof__procfile_close(&f);
  close(dfd);
  close(fd);
  close(p[0]);
  close(p[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_descriptor_sees_current_text),
      cmocka_unit_test(rss_follows_the_heap),
      cmocka_unit_test(missing_file_and_bad_arguments),
      cmocka_unit_test(exited_thread_closes_the_descriptor),
      cmocka_unit_test(reused_descriptor_is_left_to_the_program),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
