/**
 * The native spawner's C source (see spawner-native.ts), kept as text so it needs no file of its own beside
 * the bundle: it is compiled once per machine with the host's C compiler and cached by its hash. Where no
 * compiler is found the Node helper (spawner-script.ts) starts runs instead.
 *
 * Why C: a fork copies the page tables of the process that forks, and a bare Node process still maps tens
 * of megabytes (about 4 ms of CPU per `child_process.spawn` on these hosts); this program maps a few pages,
 * and its child joins the run's cgroup itself before it execs (no move of the helper, no shell between).
 */
export const NATIVE_SPAWNER_C = String.raw`/*
 * crew-spawner: starts run processes for the Crew daemon (see spawner.ts). Speaks length-prefixed
 * frames on stdin (from the daemon) and stdout (to it); stderr is the daemon's. Ends when stdin ends;
 * the runs it started are not its to end.
 *
 * In:  u32 len | u8 type | payload            Out: u32 len | u8 type | payload
 *   1 env     key\0 (K=V\0)*                       1 started  u32 id, i32 pid, i64 start time (-1: unknown)
 *   2 forget  key\0                                2 failed   u32 id, text
 *   3 spawn   u32 id, i32 oom, u32 argc,           3 out      u32 id, u8 fd, bytes
 *             file\0 check\0 cwd\0 env\0 join\0    4 eof      u32 id, u8 fd
 *             (arg\0){argc}  (check, join: "" = none)   5 exit     u32 id, i32 code (-1), i32 signal (0)
 *   4 drop    u32 id                               6 unjoined u32 id, text: the child could not join the
 *                                                             cgroup named by join (nothing was started)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FRAME (64u << 20)

struct env { char *key; char *block; char **vars; struct env *next; };
struct run { uint32_t id; pid_t pid; int fd[3]; int exited; struct run *next; };

static struct env *envs;
static struct run *runs;
static int devnull = -1;

static void out_frame(uint8_t type, const void *a, size_t alen, const void *b, size_t blen) {
  uint32_t len = (uint32_t)(1 + alen + blen);
  uint8_t head[5];
  memcpy(head, &len, 4);
  head[4] = type;
  const void *parts[3] = {head, a, b};
  size_t sizes[3] = {5, alen, blen};
  for (int i = 0; i < 3; i++) {
    const char *p = parts[i];
    size_t left = sizes[i];
    while (left > 0) {
      ssize_t n = write(1, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(0); /* the daemon is gone */
      p += n;
      left -= (size_t)n;
    }
  }
}

static void send_failed(uint32_t id, const char *text) {
  out_frame(2, &id, 4, text, strlen(text));
}

static struct env *find_env(const char *key) {
  for (struct env *e = envs; e; e = e->next)
    if (strcmp(e->key, key) == 0) return e;
  return NULL;
}

static void forget_env(const char *key) {
  for (struct env **p = &envs; *p; p = &(*p)->next) {
    if (strcmp((*p)->key, key) == 0) {
      struct env *gone = *p;
      *p = gone->next;
      free(gone->key);
      free(gone->block);
      free(gone->vars);
      free(gone);
      return;
    }
  }
}

static void add_env(const char *payload, size_t len) {
  size_t keylen = strnlen(payload, len);
  if (keylen == len) return;
  forget_env(payload);
  struct env *e = calloc(1, sizeof *e);
  e->key = strdup(payload);
  size_t rest = len - keylen - 1;
  e->block = malloc(rest + 1);
  memcpy(e->block, payload + keylen + 1, rest);
  e->block[rest] = 0;
  size_t count = 0;
  for (size_t i = 0; i < rest; i++) if (e->block[i] == 0) count++;
  e->vars = calloc(count + 1, sizeof(char *));
  size_t at = 0, n = 0;
  while (at < rest && n < count) {
    e->vars[n++] = e->block + at;
    at += strlen(e->block + at) + 1;
  }
  e->vars[n] = NULL;
  e->next = envs;
  envs = e;
}

static const char *env_path(struct env *e) {
  for (char **v = e->vars; *v; v++)
    if (strncmp(*v, "PATH=", 5) == 0) return *v + 5;
  return NULL;
}

/* Whether 'command' names an executable regular file, looked up as the child's exec would. */
static int is_executable(const char *command, const char *cwd, const char *path) {
  char candidate[8192];
  struct stat st;
  if (strchr(command, '/')) {
    if (command[0] == '/') snprintf(candidate, sizeof candidate, "%s", command);
    else snprintf(candidate, sizeof candidate, "%s/%s", cwd, command);
    return access(candidate, X_OK) == 0 && stat(candidate, &st) == 0 && S_ISREG(st.st_mode);
  }
  const char *dirs = path ? path : "/usr/bin:/bin";
  for (;;) {
    const char *end = strchr(dirs, ':');
    size_t dlen = end ? (size_t)(end - dirs) : strlen(dirs);
    if (dlen == 0) snprintf(candidate, sizeof candidate, "%s/%s", cwd, command);
    else if (dirs[0] == '/') snprintf(candidate, sizeof candidate, "%.*s/%s", (int)dlen, dirs, command);
    else snprintf(candidate, sizeof candidate, "%s/%.*s/%s", cwd, (int)dlen, dirs, command);
    if (access(candidate, X_OK) == 0 && stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    if (!end) return 0;
    dirs = end + 1;
  }
}

static void describe_failure(char *buf, size_t size, const char *file, const char *cwd) {
  struct stat st;
  if (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode))
    snprintf(buf, size, "cannot start \"%s\": the working directory %s does not exist", file, cwd);
  else
    snprintf(buf, size, "cannot start \"%s\": not found on PATH or not executable", file);
}

static long long start_time_of(pid_t pid) {
  char name[64], buf[1024];
  snprintf(name, sizeof name, "/proc/%d/stat", (int)pid);
  int fd = open(name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p) return -1;
  p += 2; /* field 3 */
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p) return -1;
    p++;
  }
  return strtoll(p, NULL, 10);
}

/* What the child tells the parent when it cannot exec: which step, and errno. */
struct child_error { int step; int err; };
enum { STEP_CWD = 1, STEP_JOIN = 2, STEP_EXEC = 3 };

static void child_fail(int status_fd, int step) {
  struct child_error ce = {step, errno};
  ssize_t ignored = write(status_fd, &ce, sizeof ce);
  (void)ignored;
  _exit(127);
}

static void child_exec(char *const argv[], char **vars, const char *cwd, const char *join, int oom,
                       int out, int err, int status_fd) {
  sigset_t none;
  sigemptyset(&none);
  for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setsid();
  if (join && join[0]) {
    int fd = open(join, O_WRONLY | O_CLOEXEC);
    char pid[24];
    int len = snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (fd < 0 || write(fd, pid, (size_t)len) != len) child_fail(status_fd, STEP_JOIN);
    close(fd);
  }
  if (oom > 0) {
    int fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      char cur[16] = {0};
      if (read(fd, cur, sizeof cur - 1) > 0 && oom > atoi(cur)) {
        char want[16];
        int len = snprintf(want, sizeof want, "%d", oom > 1000 ? 1000 : oom);
        lseek(fd, 0, SEEK_SET);
        ssize_t ignored = write(fd, want, (size_t)len);
        (void)ignored;
      }
      close(fd);
    }
  }
  if (chdir(cwd) != 0) child_fail(status_fd, STEP_CWD);
  if (dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) child_fail(status_fd, STEP_EXEC);
  const char *file = argv[0];
  if (strchr(file, '/')) {
    execve(file, argv, vars);
    child_fail(status_fd, STEP_EXEC);
  }
  const char *path = NULL;
  for (char **v = vars; *v; v++)
    if (strncmp(*v, "PATH=", 5) == 0) path = *v + 5;
  const char *dirs = path ? path : "/usr/bin:/bin";
  int saw_eacces = 0;
  char candidate[8192];
  for (;;) {
    const char *end = strchr(dirs, ':');
    size_t dlen = end ? (size_t)(end - dirs) : strlen(dirs);
    if (dlen == 0) snprintf(candidate, sizeof candidate, "%s", file);
    else snprintf(candidate, sizeof candidate, "%.*s/%s", (int)dlen, dirs, file);
    execve(candidate, argv, vars);
    if (errno == EACCES) saw_eacces = 1;
    else if (errno != ENOENT && errno != ENOTDIR) break;
    if (!end) break;
    dirs = end + 1;
  }
  if (saw_eacces) errno = EACCES;
  child_fail(status_fd, STEP_EXEC);
}

static uint32_t u32_at(const char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* Forks one run: its answer is a started, failed or unjoined frame. */
static void spawn_run(const char *payload, size_t len) {
  if (len < 12) return;
  uint32_t id = u32_at(payload);
  int32_t oom;
  memcpy(&oom, payload + 4, 4);
  uint32_t argc = u32_at(payload + 8);
  const char *p = payload + 12, *end = payload + len;
  const char *fields[5];
  for (int i = 0; i < 5; i++) {
    size_t n = strnlen(p, (size_t)(end - p));
    if (p + n >= end) return send_failed(id, "the spawner got a malformed spawn request");
    fields[i] = p;
    p += n + 1;
  }
  const char *file = fields[0], *check = fields[1], *cwd = fields[2], *key = fields[3], *join = fields[4];
  if (argc > 1u << 20) return send_failed(id, "the spawner got a malformed spawn request");
  char **argv = calloc(argc + 2, sizeof(char *));
  argv[0] = (char *)file;
  for (uint32_t i = 0; i < argc; i++) {
    size_t n = strnlen(p, (size_t)(end - p));
    if (p + n >= end) { free(argv); return send_failed(id, "the spawner got a malformed spawn request"); }
    argv[i + 1] = (char *)p;
    p += n + 1;
  }
  argv[argc + 1] = NULL;
  struct env *e = find_env(key);
  char reason[9000];
  if (!e) {
    snprintf(reason, sizeof reason, "the spawner holds no environment %s", key);
    free(argv);
    return send_failed(id, reason);
  }
  const char *shown = check[0] ? check : file;
  if (check[0] && !is_executable(check, cwd, env_path(e))) {
    describe_failure(reason, sizeof reason, check, cwd);
    free(argv);
    return send_failed(id, reason);
  }
  int out[2], err[2], status[2];
  if (pipe2(out, O_CLOEXEC) != 0) { free(argv); return send_failed(id, "the spawner could not make a pipe"); }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]); close(out[1]); free(argv);
    return send_failed(id, "the spawner could not make a pipe");
  }
  if (pipe2(status, O_CLOEXEC) != 0) {
    close(out[0]); close(out[1]); close(err[0]); close(err[1]); free(argv);
    return send_failed(id, "the spawner could not make a pipe");
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(status[0]);
    child_exec(argv, e->vars, cwd, join, oom, out[1], err[1], status[1]);
  }
  close(out[1]);
  close(err[1]);
  close(status[1]);
  free(argv);
  if (pid < 0) {
    close(out[0]); close(err[0]); close(status[0]);
    return send_failed(id, "the spawner could not fork");
  }
  struct child_error ce;
  ssize_t n;
  do n = read(status[0], &ce, sizeof ce); while (n < 0 && errno == EINTR);
  close(status[0]);
  if (n == (ssize_t)sizeof ce) {
    int wstatus;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
    close(out[0]);
    close(err[0]);
    if (ce.step == STEP_JOIN) {
      /* The daemon starts it again through the cell's shell wrapper. */
      snprintf(reason, sizeof reason, "could not join %s: %s", join, strerror(ce.err));
      out_frame(6, &id, 4, reason, strlen(reason));
      return;
    }
    if (ce.step == STEP_EXEC && ce.err != ENOENT && ce.err != EACCES && ce.err != ENOTDIR && ce.err != ENOEXEC)
      snprintf(reason, sizeof reason, "cannot start \"%s\": %s", shown, strerror(ce.err));
    else describe_failure(reason, sizeof reason, shown, cwd);
    return send_failed(id, reason);
  }
  long long start = start_time_of(pid);
  int32_t pid32 = pid;
  char started[16];
  memcpy(started, &id, 4);
  memcpy(started + 4, &pid32, 4);
  int64_t st = start;
  memcpy(started + 8, &st, 8);
  out_frame(1, started, 16, NULL, 0);
  struct run *r = calloc(1, sizeof *r);
  r->id = id;
  r->pid = pid;
  r->fd[1] = out[0];
  r->fd[2] = err[0];
  r->next = runs;
  runs = r;
}

static void send_eof(struct run *r, int which) {
  uint8_t body[5];
  memcpy(body, &r->id, 4);
  body[4] = (uint8_t)which;
  close(r->fd[which]);
  r->fd[which] = -1;
  out_frame(4, body, 5, NULL, 0);
}

static void forget_if_done(struct run **link) {
  struct run *r = *link;
  if (r->exited && r->fd[1] < 0 && r->fd[2] < 0) {
    *link = r->next;
    free(r);
  }
}

static void drop_run(uint32_t id) {
  for (struct run **link = &runs; *link; link = &(*link)->next) {
    struct run *r = *link;
    if (r->id != id) continue;
    if (r->fd[1] >= 0) send_eof(r, 1);
    if (r->fd[2] >= 0) send_eof(r, 2);
    forget_if_done(link);
    return;
  }
}

static void reap(void) {
  for (;;) {
    int wstatus;
    pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid <= 0) return;
    for (struct run **link = &runs; *link; link = &(*link)->next) {
      struct run *r = *link;
      if (r->pid != pid || r->exited) continue;
      r->exited = 1;
      int32_t code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
      int32_t sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
      char body[12];
      memcpy(body, &r->id, 4);
      memcpy(body + 4, &code, 4);
      memcpy(body + 8, &sig, 4);
      out_frame(5, body, 12, NULL, 0);
      forget_if_done(link);
      break;
    }
  }
}

static void on_frame(uint8_t type, const char *payload, size_t len) {
  switch (type) {
    case 1: add_env(payload, len); break;
    case 2: if (len > 0 && payload[len - 1] == 0) forget_env(payload); break;
    case 3: spawn_run(payload, len); break;
    case 4: if (len >= 4) drop_run(u32_at(payload)); break;
    default: break;
  }
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (sfd < 0 || devnull < 0) return 70;
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);
  size_t cap = 1 << 16, have = 0;
  char *in = malloc(cap);
  struct pollfd *fds = NULL;
  struct run **owner = NULL;
  int *which = NULL;
  size_t fds_cap = 0;
  static char data[65536 + 5];
  for (;;) {
    size_t count = 2;
    for (struct run *r = runs; r; r = r->next) count += (r->fd[1] >= 0) + (r->fd[2] >= 0);
    if (count > fds_cap) {
      fds_cap = count * 2;
      fds = realloc(fds, fds_cap * sizeof *fds);
      owner = realloc(owner, fds_cap * sizeof *owner);
      which = realloc(which, fds_cap * sizeof *which);
    }
    fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
    size_t n = 2;
    for (struct run *r = runs; r; r = r->next)
      for (int w = 1; w <= 2; w++)
        if (r->fd[w] >= 0) {
          fds[n] = (struct pollfd){.fd = r->fd[w], .events = POLLIN};
          owner[n] = r;
          which[n] = w;
          n++;
        }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      return 71;
    }
    for (size_t i = 2; i < n; i++) {
      if (!fds[i].revents) continue;
      struct run *r = owner[i];
      int w = which[i];
      if (r->fd[w] < 0) continue;
      ssize_t got = read(r->fd[w], data + 5, 65536);
      if (got > 0) {
        memcpy(data, &r->id, 4);
        data[4] = (char)w;
        out_frame(3, data, (size_t)got + 5, NULL, 0);
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        send_eof(r, w);
      }
    }
    /* Runs whose pipes and exit are all in: forgotten (after the loop, which holds pointers to them). */
    for (struct run **link = &runs; *link;) {
      struct run *r = *link;
      forget_if_done(link);
      if (*link == r) link = &r->next;
    }
    if (fds[1].revents) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) > 0) {}
      reap();
    }
    if (fds[0].revents) {
      if (have == cap) { cap *= 2; in = realloc(in, cap); }
      ssize_t got = read(0, in + have, cap - have);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return 0;
      if (got > 0) have += (size_t)got;
      size_t at = 0;
      while (have - at >= 4) {
        uint32_t len = u32_at(in + at);
        if (len == 0 || len > MAX_FRAME) return 72;
        if (have - at - 4 < len) {
          if (len + 4 > cap) { cap = len + 4; in = realloc(in, cap); }
          break;
        }
        on_frame((uint8_t)in[at + 4], in + at + 5, len - 1);
        at += 4 + len;
      }
      memmove(in, in + at, have - at);
      have -= at;
    }
  }
}
`;
