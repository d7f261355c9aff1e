/* fork_exec.c — a program that starts children, for the real-programs
 * test: one child execs /bin/echo, one re-execs this program, one only
 * forks and exits with a status of its own. The parent burns a little CPU
 * meanwhile, waits for each and prints what it saw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile double sink;

static void burn(int n) {
  double x = 1.0;
  for (int k = 0; k < n; k++)
    for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static int wait_for(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "inner") == 0) {
    burn(50);
    printf("inner run\n");
    return 7;
  }
  fflush(stdout);
  pid_t a = fork();
  if (a == 0) {
    execl("/bin/echo", "echo", "hello from echo", (char *)NULL);
    _exit(127);
  }
  burn(50);
  printf("echo child: %d\n", wait_for(a));
  fflush(stdout);
  pid_t b = fork();
  if (b == 0) {
    execl("/proc/self/exe", argv[0], "inner", (char *)NULL);
    _exit(127);
  }
  printf("self child: %d\n", wait_for(b));
  fflush(stdout);
  pid_t c = fork();
  if (c == 0) {
    burn(50);
    printf("forked child\n");
    fflush(stdout);
    _exit(5);
  }
  printf("forked child: %d\n", wait_for(c));
  return 0;
}
