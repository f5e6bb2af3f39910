/*
 * The native floor of bench/e2e (for reference, no goal is judged on it): what starting `true` costs from a
 * C program with posix_spawn, eight at a time, each with its stdout and stderr piped and waited for, as the
 * Node floor does with child_process.spawn. Reads lines "wave N" or "singles N" on stdin and answers each
 * with {"ms": ..., "cpuMs": ...} (its own CPU, children excluded, as the Node floor reports).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

struct child { pid_t pid; int out, err; };

static struct child start(void) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) { perror("pipe"); exit(1); }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  char *argv[] = {"true", NULL};
  struct child c = {0, out[0], err[0]};
  if (posix_spawnp(&c.pid, "true", &actions, NULL, argv, environ)) { perror("posix_spawnp"); exit(1); }
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  return c;
}

/* Until its exit and both pipes' end ("close" in Node's words). */
static void finish(pid_t pid, struct child *children, int count) {
  for (int i = 0; i < count; i++) {
    if (children[i].pid != pid) continue;
    char buf[256];
    while (read(children[i].out, buf, sizeof buf) > 0) {}
    while (read(children[i].err, buf, sizeof buf) > 0) {}
    close(children[i].out);
    close(children[i].err);
    children[i].pid = 0;
    return;
  }
}

int main(int argc, char **argv) {
  int cap = argc > 1 ? atoi(argv[1]) : 8;
  struct child *children = calloc((size_t)cap, sizeof *children);
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    char kind[16];
    int n;
    if (sscanf(line, "%15s %d", kind, &n) != 2) continue;
    int width = strcmp(kind, "wave") == 0 ? cap : 1;
    double c0 = cpu_ms(), t0 = now_ms();
    int started = 0, running = 0;
    while (started < n || running > 0) {
      while (running < width && started < n) {
        for (int i = 0; i < cap; i++)
          if (children[i].pid == 0) { children[i] = start(); break; }
        started++;
        running++;
      }
      int status;
      pid_t pid = wait(&status);
      if (pid > 0) { finish(pid, children, cap); running--; }
    }
    printf("{\"ms\":%.3f,\"cpuMs\":%.3f}\n", now_ms() - t0, cpu_ms() - c0);
    fflush(stdout);
  }
  return 0;
}
