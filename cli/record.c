/*
 * record.c: `pitrace record`, which runs a command with recording on and
 * keeps the sessions of its processes (pitrace record --help).
 *
 * OpenCL applications are routed through pitrace's OpenCL front end (unless
 * --no-opencl), so their OpenCL calls are recorded as PI calls; applications
 * of pirt.h record as they are (route_opencl.c).
 *
 * The command runs with SYCL_PI_RECORD set to the sessions directory, so
 * every process that makes PI calls records into a session file of its own
 * there (session/writer.c names it pitrace-<pid>-<time>.db): processes
 * recording at the same time share nothing. It also gets
 * PITRACE_RECORD_RUN, a token of this run, which the shim keeps with the
 * session's environment (sessions.env): that tells this run's sessions
 * from those of earlier runs, or of runs at the same time, in the same
 * directory.
 *
 * Exit statuses: pitrace is the command's child subreaper
 * (PR_SET_CHILD_SUBREAPER), so it reaps the command and every descendant
 * orphaned on the way, and matches their statuses to sessions by pid (and
 * start time). A process that its own parent reaped (a shell's or a test
 * runner's children) shows pitrace no status: its session only says
 * whether it crashed (ended 'signal'), ended without teardown ('running'),
 * or tore down normally; an exit_status the recorder stored itself is used
 * when there is one. Statuses pitrace saw are written into the kept
 * sessions' exit_status (0-255, or 128 + the signal).
 *
 * --keep on-failure: when the command succeeds nothing is kept but the
 * sessions of processes it left running that failed after it ended (its
 * status cannot tell of them). When it
 * fails and some recorded process is known to have failed (crashed, a
 * non-zero status, no teardown), the sessions of the processes known to
 * have succeeded are dropped and the others kept (a process whose status
 * is unknown may be the one that failed); when none is known to have
 * failed (the failure came from a process without PI calls), every
 * session of the run is kept.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pi_api.h"
#include "cli_verbs.h"
#include "pitrace_cli.h"
#include "session.h"
#include "recorder.h"

#define RUN_VAR PT_RECORD_RUN_VAR
#define LAST_CALLS 5     /* calls shown before a failing session's end */
#define ERRORS_SHOWN 5   /* failed calls shown per session */
#define DETAILED 6       /* sessions summarised call by call */
#define LISTED 20        /* further sessions listed by file */

static const char usage_text[] =
    "usage: pitrace record [OPTIONS] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with recording on: each of its processes (children included) that\n"
    "makes PI calls records its own session file, pitrace-<pid>-<time>.db, in the\n"
    "sessions directory. Exits with CMD's exit status (128 + N when signal N ended\n"
    "it; 127 when CMD is not found, 126 when it cannot be run; 2 for a usage\n"
    "error). When CMD fails, a summary on stderr says how it ended, each kept\n"
    "session's last calls (a call that never returned is flagged) and failed\n"
    "calls, and where the sessions are. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent\n"
    "to pitrace are passed on to CMD, and to each process of it that its parent\n"
    "leaves to pitrace afterwards; a stopped one is continued to take it.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR          the sessions directory (default ./pitrace-sessions;\n"
    "                            created with mode 0700; session files are 0600)\n"
    "  --keep always|on-failure  always (the default): keep every session.\n"
    "                            on-failure: when CMD succeeds keep only processes\n"
    "                            it left running that failed after it; when it\n"
    "                            fails drop the sessions of processes known to have\n"
    "                            succeeded, keeping those that failed or crashed;\n"
    "                            when none of those is known to have failed (the\n"
    "                            failure came from a process without PI calls),\n"
    "                            keep every session of the run\n"
    "  --data none|meta|all      payload data to record (SYCL_PI_RECORD_DATA)\n"
    "  --backtrace               record call stacks (SYCL_PI_RECORD_BACKTRACE=1)\n"
    "  --profile                 record device times of kernels and transfers\n"
    "                            (SYCL_PI_RECORD_PROFILE=1: queues get profiling)\n"
    "  --label L                 label the sessions (SYCL_PI_RECORD_LABEL)\n"
    "  --no-opencl               do not route OpenCL applications through pitrace's\n"
    "                            OpenCL front end (by default their OpenCL calls are\n"
    "                            recorded as PI calls; see pitrace run --help)\n"
    "  -h, --help                this text\n"
    "\n"
    "Exit statuses are known for CMD and for processes orphaned while it ran;\n"
    "those reaped by their own parent count as failed when they crashed or ended\n"
    "without teardown. Known statuses go into the sessions' exit_status column.\n"
    "\n"
    "example (CI): pitrace record --keep on-failure -o sessions -- ctest\n"
    "then: pitrace show FILE, pitrace report FILE -o report.html, pitrace replay FILE\n";

typedef enum { KEEP_ALWAYS, KEEP_ON_FAILURE } keep_mode;

typedef struct options {
  const char *dir;
  keep_mode keep;
  const char *data, *label;
  bool backtrace;
  bool profile;
  bool no_opencl;
  char *icd; /* the front end's vendor file, when routing */
  char **cmd;
} options;

typedef struct reaped {
  pid_t pid;
  int status;      /* as waitpid gives it */
  int64_t when_ns; /* CLOCK_REALTIME when reaped */
} reaped;

typedef struct reaped_list {
  reaped *v;
  size_t n, cap;
  size_t main_at; /* the command's own entry, once reaped (else SIZE_MAX) */
} reaped_list;

typedef enum { V_UNKNOWN, V_SUCCEEDED, V_FAILED } verdict;

typedef struct rsession {
  size_t file;          /* index into the files */
  pt_session_info info;
  bool reaped_here;     /* pitrace reaped it: write exit_status */
  bool outlived;        /* reaped after the command: a process it left running */
  int code;             /* when known: 0-255, or 128 + the signal */
  verdict v;
  bool keep;
  char how[192];        /* how it ended, in words */
  /* Its data left out from a call on (a full disk): what the session says. */
  char data_cut[256];
} rsession;

typedef struct rfile {
  char *path;
  bool foreign; /* holds sessions of other runs too */
  bool keep;
  size_t ours;  /* sessions of this run */
} rfile;

typedef struct run_state {
  rsession *s;
  size_t ns, caps;
  rfile *f;
  size_t nf, capf;
  char **unreadable; /* new files that are no readable session: "path: why" */
  size_t nu, capu;
} run_state;

/* ---- Small helpers ------------------------------------------------------------ */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0)
    s = NULL;
  va_end(ap);
  if (!s) {
    fputs("pitrace record: out of memory\n", stderr);
    exit(2);
  }
  return s;
}

static void *grow(void *v, size_t *cap, size_t n, size_t elem)
{
  if (n < *cap)
    return v;
  size_t nc = *cap ? *cap * 2 : 16;
  void *nv = realloc(v, nc * elem);
  if (!nv) {
    fputs("pitrace record: out of memory\n", stderr);
    exit(2);
  }
  *cap = nc;
  return nv;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("pitrace record: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(" (pitrace record --help)\n", stderr);
  va_end(ap);
  return 2;
}

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *signal_name(int sig)
{
  static const struct {
    int sig;
    const char *name;
  } names[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
               {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
               {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
               {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
               {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
               {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].sig == sig)
      return names[i].name;
  return "a signal";
}

/* "crashed: signal 11 (SIGSEGV)" for a fault or an abort, "killed by
 * signal 13 (SIGPIPE)" for a signal sent to it (SIGTERM, `app | head`). */
static const char *ended_by(int sig)
{
  bool crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
               sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
  return crash ? "crashed:" : "killed by";
}

/* 0-255 for an exit, 128 + the signal for a death by signal. */
static int status_code(int status)
{
  return WIFEXITED(status) ? WEXITSTATUS(status)
         : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
}

/* "exited with status 3", "was killed by signal 11 (SIGSEGV)". */
static void describe_status(char *out, size_t n, int status)
{
  if (WIFEXITED(status))
    snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(out, n, "was killed by signal %d (%s)%s", WTERMSIG(status),
             signal_name(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
  else
    snprintf(out, n, "ended with wait status 0x%x", (unsigned)status);
}

/* The command line as a shell would take it back (quoted where needed). */
static char *command_text(char **cmd)
{
  size_t cap = 64, len = 0;
  char *s = malloc(cap);
  if (!s)
    return xasprintf("%s", cmd[0]);
  s[0] = 0;
  for (char **a = cmd; *a; a++) {
    bool plain = **a != 0;
    for (const char *p = *a; *p; p++)
      if (!isalnum((unsigned char)*p) && !strchr("_-./=:,+@%", *p))
        plain = false;
    size_t need = len + 4 * strlen(*a) + 5;
    if (need > cap) {
      char *ns = realloc(s, cap = need * 2);
      if (!ns) {
        free(s);
        return xasprintf("%s", cmd[0]);
      }
      s = ns;
    }
    if (a != cmd)
      s[len++] = ' ';
    if (plain) {
      len += (size_t)sprintf(s + len, "%s", *a);
      continue;
    }
    bool control = false;
    for (const char *p = *a; *p; p++)
      control |= (unsigned char)*p < 0x20 || *p == 0x7f;
    if (control) {
      /* $'...' (bash, zsh, POSIX 2024): the command on one line, each
       * newline of a python3 -c script as \n, still one to paste. */
      s[len++] = '$';
      s[len++] = '\'';
      for (const char *p = *a; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '\n' || ch == '\t')
          len += (size_t)sprintf(s + len, "\\%c", ch == '\n' ? 'n' : 't');
        else if (ch < 0x20 || ch == 0x7f)
          len += (size_t)sprintf(s + len, "\\x%02x", ch);
        else if (ch == '\'' || ch == '\\')
          len += (size_t)sprintf(s + len, "\\%c", ch);
        else
          s[len++] = (char)ch;
      }
      s[len++] = '\'';
      s[len] = 0;
      continue;
    }
    s[len++] = '\'';
    for (const char *p = *a; *p; p++) {
      if (*p == '\'') {
        memcpy(s + len, "'\\''", 4);
        len += 4;
      } else {
        s[len++] = *p;
      }
    }
    s[len++] = '\'';
    s[len] = 0;
  }
  return s;
}

/* ---- Options -------------------------------------------------------------------- */

/* Parses the verb's arguments; -1 when they are fine, else the exit status. */
static int parse_options(int argc, char **argv, options *o)
{
  memset(o, 0, sizeof *o);
  o->dir = "pitrace-sessions";
  o->keep = KEEP_ALWAYS;
  const char *keep = NULL;
  const pt_opt opts[] = {{"-o", PT_OPT_STR, &o->dir},
                         {"--output", PT_OPT_STR, &o->dir},
                         {"--keep", PT_OPT_STR, &keep},
                         {"--data", PT_OPT_STR, &o->data},
                         {"--label", PT_OPT_STR, &o->label},
                         {"--backtrace", PT_OPT_FLAG, &o->backtrace},
                         {"--profile", PT_OPT_FLAG, &o->profile},
                         {"--no-opencl", PT_OPT_FLAG, &o->no_opencl},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage_text, opts, 0, PT_ARGS_COMMAND, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (pt_output_path_empty("record", o->dir, "the directory to record into, or leave -o out "
                           "for ./pitrace-sessions"))
    return 2;
  if (keep && strcmp(keep, "on-failure") == 0)
    o->keep = KEEP_ON_FAILURE;
  else if (keep && strcmp(keep, "always") != 0)
    return usage_error("--keep takes always or on-failure, not '%s'", keep);
  if (o->data && strcmp(o->data, "none") != 0 && strcmp(o->data, "meta") != 0 &&
      strcmp(o->data, "all") != 0)
    return usage_error("--data takes none, meta or all, not '%s'", o->data);
  if (!a.cmd)
    return usage_error("no command to run: pitrace record [OPTIONS] -- CMD [ARGS...]");
  o->cmd = a.cmd;
  if (!o->no_opencl) {
    char err[2 * PATH_MAX + 256];
    if (!(o->icd = pt_opencl_icd(err, sizeof err)))
      return usage_error("%s (or record with --no-opencl)", err);
  }
  return -1;
}

/* ---- The sessions directory ------------------------------------------------------- */

/* Makes `dir` (mode 0700) and its missing parents; *created says whether
 * `dir` itself is new. False with a reason. */
static bool make_dir(const char *dir, bool *created, char *err, size_t errn)
{
  *created = false;
  char *p = xasprintf("%s", dir);
  for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
    p[n - 1] = 0;
  struct stat st;
  bool ok = true;
  if (stat(p, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      snprintf(err, errn, "%s is not a directory (-o names the directory the sessions "
                          "go to)", p);
      ok = false;
    }
  } else if (errno != ENOENT) {
    snprintf(err, errn, "%s: %s", p, strerror(errno));
    ok = false;
  } else {
    int e = writer_make_dirs(p, 0700, created);
    if (e) {
      snprintf(err, errn, "cannot create %s: %s", p, strerror(e));
      ok = false;
    } else if (*created && chmod(p, 0700) != 0) {
      /* The umask may have taken more than group and other bits away. */
      snprintf(err, errn, "cannot make %s private: %s", p, strerror(errno));
      ok = false;
    }
  }
  if (ok && access(p, W_OK | X_OK) != 0) {
    snprintf(err, errn, "cannot write sessions into %s: %s", p, strerror(errno));
    ok = false;
  }
  /* Each process's file is DIR/pitrace-PID-TIME.db: its whole path must
   * be one SQLite can open, or no process is recorded. */
  char *longest = xasprintf("%s/pitrace-%d-%lld.db", p, INT32_MAX, 99999999999LL);
  size_t len, most;
  if (ok && !pt_path_openable(longest, &len, &most)) {
    snprintf(err, errn, "%s is too deep for sessions: their paths in it are up to %zu "
             "characters long, and SQLite opens files by paths of up to %zu; give -o a "
             "shorter one", p, len, most);
    if (*created)
      rmdir(p);
    ok = false;
  }
  /* The recorder reads "%p" in SYCL_PI_RECORD as the pid: in the
   * directory's path, each process's session went to a directory named
   * after its pid, none here (and the run said no process made PI calls). */
  char real[PATH_MAX];
  if (ok && realpath(p, real) && strstr(real, "%p")) {
    snprintf(err, errn, "%s: its path holds %%p, which the recorder replaces by each "
             "process's pid (SYCL_PI_RECORD), so the sessions would go elsewhere; give -o a "
             "directory without it", real);
    if (*created)
      rmdir(p);
    ok = false;
  }
  free(longest);
  free(p);
  return ok;
}

static bool is_session_name(const char *name)
{
  size_t n = strlen(name);
  return strncmp(name, "pitrace-", 8) == 0 && n > 11 && strcmp(name + n - 3, ".db") == 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The session files in `dir` now, sorted. */
static char **list_sessions(const char *dir, size_t *n)
{
  *n = 0;
  size_t cap = 0;
  char **v = NULL;
  DIR *d = opendir(dir);
  if (!d)
    return NULL;
  struct dirent *e;
  while ((e = readdir(d)))
    if (is_session_name(e->d_name)) {
      v = grow(v, &cap, *n, sizeof *v);
      v[(*n)++] = xasprintf("%s", e->d_name);
    }
  closedir(d);
  if (*n)
    qsort(v, *n, sizeof *v, cmp_str);
  return v;
}

static void free_list(char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* ---- Running the command ------------------------------------------------------- */

static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};

static void on_sigchld(int sig) { (void)sig; }

/* The parent of `pid` from /proc, or -1. */
static pid_t parent_of(pid_t pid)
{
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = 0;
  const char *rp = strrchr(buf, ')'); /* the name may hold spaces and ')' */
  char state;
  int ppid;
  if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
    return -1;
  return (pid_t)ppid;
}

/* pitrace's own children (the command, orphans reparented here): up to
 * `max` into `out`; returns how many there are. */
static size_t own_children(pid_t *out, size_t max)
{
  size_t n = 0;
  DIR *d = opendir("/proc");
  if (!d)
    return 0;
  pid_t self = getpid();
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!isdigit((unsigned char)e->d_name[0]))
      continue;
    pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
    if (parent_of(pid) == self) {
      if (n < max)
        out[n] = pid;
      n++;
    }
  }
  closedir(d);
  return n;
}

/* Says that the command ended and which processes it left running, if any. */
static void announce_left_running(const char *cmdline, int main_status)
{
  pid_t kids[8];
  size_t n = own_children(kids, 8);
  if (!n)
    return;
  char status[128];
  describe_status(status, sizeof status, main_status);
  fprintf(stderr, "pitrace record: %s %s; waiting for the %zu process%s it left running (pid",
          cmdline, status, n, n == 1 ? "" : "es");
  for (size_t i = 0; i < n && i < 8; i++)
    fprintf(stderr, "%s %d", i ? "," : "", (int)kids[i]);
  fprintf(stderr, "%s); SIGINT or SIGTERM to pitrace is passed on to them\n",
          n > 8 ? ", ..." : "");
}

/* The signal pitrace last passed on, and the children it went to. */
typedef struct passed_on {
  int sig; /* 0: none yet */
  bool from_terminal;
  pid_t *to;
  size_t n, cap;
} passed_on;

/* Passes `sig` on to pitrace's children (sig 0: the last one passed on, to
 * children that have come since: processes orphaned to pitrace, whose
 * parent ended without passing it on; else they would run on and pitrace
 * wait for them). A terminal's ^C or ^\ (from the kernel) went to its
 * whole foreground process group already, pitrace's children in pitrace's
 * group included: passing it on to them would deliver it twice. Each child
 * is continued after it (SIGCONT, as timeout(1) does): a stopped process
 * takes the signal only then, and pitrace would wait for it for ever. */
static void forward_signal(passed_on *po, int sig, bool from_terminal)
{
  if (sig) {
    po->sig = sig;
    po->from_terminal = from_terminal;
    po->n = 0;
  }
  if (!po->sig)
    return;
  pid_t kids[4096];
  size_t n = own_children(kids, sizeof kids / sizeof *kids);
  pid_t group = getpgrp();
  for (size_t i = 0; i < n && i < sizeof kids / sizeof *kids; i++) {
    bool done = false;
    for (size_t j = 0; j < po->n && !done; j++)
      done = po->to[j] == kids[i];
    if (done)
      continue;
    po->to = grow(po->to, &po->cap, po->n, sizeof *po->to);
    po->to[po->n++] = kids[i];
    if (!po->from_terminal || getpgid(kids[i]) != group)
      kill(kids[i], po->sig);
    kill(kids[i], SIGCONT);
  }
}

static void push_reaped(reaped_list *rl, pid_t pid, int status)
{
  rl->v = grow(rl->v, &rl->cap, rl->n, sizeof *rl->v);
  rl->v[rl->n++] = (reaped){pid, status, now_ns()};
}

/* In the child: the recording environment, then CMD. Reports a failed exec
 * through `errfd` (close-on-exec). */
static void exec_command(const options *o, const char *dir, const char *run_id,
                         const sigset_t *mask, const struct sigaction *pipe_action, int errfd)
{
  signal(SIGCHLD, SIG_DFL);
  sigaction(SIGPIPE, pipe_action, NULL);
  sigprocmask(SIG_SETMASK, mask, NULL);
  /* A trailing '/': a directory, made again by the recorder should another
   * run's end remove it meanwhile (it removes the default directory it made
   * when left empty), not a file by its name. */
  char dir_slash[4200];
  snprintf(dir_slash, sizeof dir_slash, "%s/", dir);
  setenv("SYCL_PI_RECORD", dir_slash, 1);
  setenv(RUN_VAR, run_id, 1);
  if (o->data)
    setenv("SYCL_PI_RECORD_DATA", o->data, 1);
  if (o->backtrace)
    setenv("SYCL_PI_RECORD_BACKTRACE", "1", 1);
  if (o->profile)
    setenv("SYCL_PI_RECORD_PROFILE", "1", 1);
  if (o->label)
    setenv("SYCL_PI_RECORD_LABEL", o->label, 1);
  if (o->icd)
    pt_route_opencl(o->icd);
  execvp(o->cmd[0], o->cmd);
  int e = errno;
  ssize_t w = write(errfd, &e, sizeof e);
  (void)w;
  _exit(e == ENOENT ? 127 : 126);
}

/* Runs the command and waits for it and every descendant left to pitrace.
 * Returns false when it could not be started (*exec_errno set, or 0 when
 * fork failed). */
static bool run_command(const options *o, const char *dir, const char *run_id,
                        const char *cmdline, reaped_list *rl, int *main_status,
                        int *exec_errno)
{
  *exec_errno = 0;
  /* Orphaned descendants come to pitrace, so their statuses are seen and
   * their sessions are complete before pitrace looks at them. */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_NOCLDSTOP;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  /* A closed stderr (pitrace record ... 2>&1 | head) is no reason to die:
   * pitrace would end mid-run on its "waiting for" line, its command's
   * processes left to init and its sessions to nobody, or on the summary,
   * exiting 141 instead of the command's status. The command gets the
   * disposition pitrace was given. */
  struct sigaction ign, pipe_action;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &pipe_action);
  sigset_t waitset, old;
  sigemptyset(&waitset);
  sigaddset(&waitset, SIGCHLD);
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
    sigaddset(&waitset, forwarded[i]);
  sigprocmask(SIG_BLOCK, &waitset, &old);

  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    fprintf(stderr, "pitrace record: cannot start %s: %s\n", cmdline, strerror(errno));
    return false;
  }
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "pitrace record: cannot start %s: %s\n", cmdline, strerror(errno));
    close(errpipe[0]);
    close(errpipe[1]);
    return false;
  }
  if (child == 0) {
    close(errpipe[0]);
    exec_command(o, dir, run_id, &old, &pipe_action, errpipe[1]);
  }
  close(errpipe[1]);
  ssize_t got;
  do
    got = read(errpipe[0], exec_errno, sizeof *exec_errno);
  while (got < 0 && errno == EINTR);
  close(errpipe[0]);
  if (got != (ssize_t)sizeof *exec_errno)
    *exec_errno = 0;

  bool main_done = false, announced = false;
  passed_on po = {0};
  unsigned looks = 0;
  for (;;) {
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
      push_reaped(rl, p, st);
      if (p == child) {
        rl->main_at = rl->n - 1;
        main_done = true;
        *main_status = st;
      }
    }
    if (p < 0 && errno != EINTR)
      break; /* ECHILD: no process of the command is left */
    siginfo_t si;
    int sig;
    if (po.sig) {
      /* Passed on: look again for processes orphaned since (their parent's
       * end is a SIGCHLD only when pitrace was that parent). */
      forward_signal(&po, 0, false);
      struct timespec look = {0, 200000000};
      sig = sigtimedwait(&waitset, &si, &look);
      if (sig < 0 && errno == EAGAIN && main_done && !announced && ++looks >= 10) {
        announce_left_running(cmdline, *main_status);
        announced = true;
      }
    } else if (main_done && !announced) {
      struct timespec wait2 = {2, 0};
      sig = sigtimedwait(&waitset, &si, &wait2);
      if (sig < 0 && errno == EAGAIN) {
        announce_left_running(cmdline, *main_status);
        announced = true;
        continue;
      }
    } else {
      sig = sigwaitinfo(&waitset, &si);
    }
    if (sig <= 0 || sig == SIGCHLD)
      continue;
    /* Also once the command has ended: the processes it left running get
     * a terminal's ^C from the terminal, as it did. */
    forward_signal(&po, sig, si.si_code == SI_KERNEL);
  }
  free(po.to);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return *exec_errno == 0;
}

/* ---- Reading back the sessions ------------------------------------------------- */

/* Whether a session's environment (a JSON object) holds this run's token. */
/* Whether session `id` was recorded by the run `run_id` (pitrace sets
 * RUN_VAR in the environment of what it runs). */
static bool session_of_run(pt_db *db, int64_t id, const char *run_id)
{
  char *v = pt_session_env_var(db, id, RUN_VAR);
  bool ours = v && strcmp(v, run_id) == 0;
  free(v);
  return ours;
}
/* The status pitrace reaped for a session's process: the first reaped
 * after the session began with its pid. */
static const reaped *find_reaped(const reaped_list *rl, const pt_session_info *info)
{
  const reaped *best = NULL;
  for (size_t i = 0; i < rl->n; i++) {
    const reaped *r = &rl->v[i];
    if (r->pid == (pid_t)info->pid && r->when_ns >= info->start_unix_ns - 1000000000LL &&
        (!best || r->when_ns < best->when_ns))
      best = r;
  }
  return best;
}

/* The files the run's processes recorded into, while reading them back. */
typedef struct run_files {
  const reaped_list *rl;
  char **names; /* the session files new since the run began, sorted */
  size_t n;
  const char *name; /* the file being read */
} run_files;

/* Whether the process of a session in file `name`, reaped as `r`, had
 * gone on as another program (exec) that recorded a session of its own:
 * a later file of its pid, begun before that pid was reaped. (In the same
 * second the next program records into the same file, and its salvage
 * sees the exec itself.) `r` is then that program's status. */
static bool went_on(const run_files *rf, const char *name, int pid, const reaped *r)
{
  int fpid;
  long long t1, t2;
  if (!r || sscanf(name, "pitrace-%d-%lld.db", &fpid, &t1) != 2)
    return false;
  for (size_t i = 0; i < rf->n; i++)
    if (sscanf(rf->names[i], "pitrace-%d-%lld.db", &fpid, &t2) == 2 && fpid == pid &&
        t2 > t1 && t2 * 1000000000LL <= r->when_ns)
      return true;
  return false;
}

/* Decides how a session's process ended. */
static void judge(rsession *s, const reaped *r, bool shim_status, int shim_code)
{
  const char *ended = s->info.ended;
  if (strcmp(ended, "exec") == 0) { /* its pid's status is the next program's */
    s->v = V_UNKNOWN;
    snprintf(s->how, sizeof s->how, "went on as another program (exec)");
    return;
  }
  /* running: nobody salvaged it (an older recorder); killed and _exit: its
   * calls were salvaged from its ring file. */
  const char *no_teardown = strcmp(ended, "running") == 0 || strcmp(ended, "killed") == 0 ||
                                    strcmp(ended, "_exit") == 0
                                ? " without teardown"
                                : "";
  if (r) {
    s->reaped_here = true;
    s->code = status_code(r->status);
    s->v = s->code == 0 ? V_SUCCEEDED : V_FAILED;
    if (WIFSIGNALED(r->status))
      snprintf(s->how, sizeof s->how, "%s signal %d (%s)", ended_by(WTERMSIG(r->status)),
               WTERMSIG(r->status), signal_name(WTERMSIG(r->status)));
    else
      snprintf(s->how, sizeof s->how, "exited with status %d%s", s->code, no_teardown);
  } else if (strcmp(ended, "signal") == 0) {
    s->code = 128 + (int)s->info.signal;
    s->v = V_FAILED;
    snprintf(s->how, sizeof s->how, "%s signal %d (%s)", ended_by((int)s->info.signal),
             (int)s->info.signal, signal_name((int)s->info.signal));
  } else if (shim_status) {
    s->code = shim_code;
    s->v = shim_code == 0 ? V_SUCCEEDED : V_FAILED;
    snprintf(s->how, sizeof s->how, "exited with status %d%s", shim_code, no_teardown);
  } else if (*no_teardown) {
    s->v = V_FAILED;
    snprintf(s->how, sizeof s->how, "ended without teardown (killed, or _exit)");
  } else if (strcmp(ended, "incomplete") == 0) {
    s->v = V_UNKNOWN;
    snprintf(s->how, sizeof s->how, "recording incomplete (see its incomplete_reason)");
  } else {
    s->v = V_UNKNOWN;
    snprintf(s->how, sizeof s->how, "ended normally; its exit status was not seen (its "
                                    "parent reaped it)");
  }
  /* Its status known, the recording stopped part-way all the same: its
   * last calls shown are the last recorded, not the last made. */
  size_t len = strlen(s->how);
  if (strcmp(ended, "incomplete") == 0 && strncmp(s->how, "recording incomplete", 20) != 0)
    snprintf(s->how + len, sizeof s->how - len, ", its recording stopped part-way (see its "
             "incomplete_reason)");
}

/* writer_salvage's question: how the process `pid` of a session begun at
 * `start_ns` ended, when pitrace reaped it. */
static writer_status reaped_status(void *ctx, int pid, int64_t start_ns, int *wait_status)
{
  const run_files *rf = ctx;
  pt_session_info info = {.pid = pid, .start_unix_ns = start_ns};
  const reaped *r = find_reaped(rf->rl, &info);
  if (!r)
    return WRITER_STATUS_UNKNOWN;
  if (went_on(rf, rf->name, pid, r))
    return WRITER_STATUS_EXEC;
  *wait_status = r->status;
  return WRITER_STATUS_KNOWN;
}

/* Reads this run's sessions in file `name` of `dir` (a file new since the
 * run began). */
static void read_file(run_state *rs, const char *dir, const char *name, const char *run_id,
                      run_files *rf)
{
  rf->name = name;
  char *path = xasprintf("%s/%s", dir, name);
  pt_db db;
  char err[512], err2[512];
  /* A process that ended without a word (_exit, SIGKILL) left its last
   * calls in its ring file: into the session, saying how it ended. */
  char serr[1200];
  if (writer_salvage(path, reaped_status, rf, serr, sizeof serr) < 0)
    pt_say_salvage_error("record", serr);
  /* Every process of this run has ended: a file whose process is still
   * running is another run's, one sharing the directory, maybe still
   * empty or half made as its process begins its session. Not this run's
   * to remove or to call unreadable. */
  int fpid;
  if (sscanf(name, "pitrace-%d-", &fpid) == 1 && fpid > 0 &&
      (kill((pid_t)fpid, 0) == 0 || errno == EPERM)) {
    if (!pt_open(path, 0, &db, err, sizeof err)) {
      free(path);
      return;
    }
    pt_close(&db);
  }
  /* A process of this run that could not begin its session (a full disk:
   * it said so) left its file empty. */
  if (pt_remove_if_empty(path)) {
    rs->unreadable = grow(rs->unreadable, &rs->capu, rs->nu, sizeof *rs->unreadable);
    rs->unreadable[rs->nu++] = xasprintf("%s: empty (its process could not begin its session), "
                                         "removed", path);
    free(path);
    return;
  }
  if (!pt_open(path, PT_OPEN_WRITABLE, &db, err, sizeof err) &&
      !pt_open(path, 0, &db, err2, sizeof err2)) {
    rs->unreadable = grow(rs->unreadable, &rs->capu, rs->nu, sizeof *rs->unreadable);
    rs->unreadable[rs->nu++] = xasprintf("%s; left alone", err);
    free(path);
    return;
  }
  size_t n = 0;
  pt_session_info *info = pt_sessions(&db, &n, err, sizeof err);
  if (!info) {
    rs->unreadable = grow(rs->unreadable, &rs->capu, rs->nu, sizeof *rs->unreadable);
    rs->unreadable[rs->nu++] = xasprintf("%s; left alone", err);
    pt_close(&db);
    free(path);
    return;
  }
  rfile f = {path, false, false, 0};
  for (size_t k = 0; k < n; k++) {
    const pt_session_info *si = &info[k];
    if (!session_of_run(&db, si->id, run_id)) {
      f.foreign = true;
      continue;
    }
    rs->s = grow(rs->s, &rs->caps, rs->ns, sizeof *rs->s);
    rsession *s = &rs->s[rs->ns++];
    memset(s, 0, sizeof *s);
    s->file = rs->nf;
    s->info = *si;
    const reaped *r = find_reaped(rf->rl, si);
    judge(s, r, si->has_exit_status, si->exit_status);
    s->outlived = r && (size_t)(r - rf->rl->v) > rf->rl->main_at;
    char reason[512];
    pt_incomplete_reason(&db, si->id, reason, sizeof reason);
    const char *cut = strstr(reason, PT_DATA_CUT);
    if (cut)
      snprintf(s->data_cut, sizeof s->data_cut, "%s", cut);
    f.ours++;
  }
  free(info);
  pt_close(&db);
  if (f.ours) {
    rs->f = grow(rs->f, &rs->capf, rs->nf, sizeof *rs->f);
    rs->f[rs->nf++] = f;
  } else {
    free(path);
  }
}

static void collect(run_state *rs, const char *dir, const char *run_id, const reaped_list *rl,
                    char **before, size_t nbefore)
{
  size_t n;
  char **names = list_sessions(dir, &n);
  run_files rf = {rl, names, n, NULL};
  /* Files that were there before the run hold none of its sessions. */
  for (size_t i = 0; i < n; i++)
    if (!nbefore || !bsearch(&names[i], before, nbefore, sizeof *before, cmp_str))
      read_file(rs, dir, names[i], run_id, &rf);
  free_list(names, n);
}

/* Stores the statuses pitrace saw into the kept sessions. */
static void write_statuses(run_state *rs)
{
  for (size_t fi = 0; fi < rs->nf; fi++) {
    rfile *f = &rs->f[fi];
    bool any = false;
    for (size_t i = 0; i < rs->ns && !any; i++)
      any = rs->s[i].file == fi && rs->s[i].keep && rs->s[i].reaped_here;
    if (!any)
      continue;
    pt_db db;
    char err[512];
    if (!pt_open(f->path, PT_OPEN_WRITABLE, &db, err, sizeof err)) {
      fprintf(stderr, "pitrace record: cannot store exit statuses in %s: %s\n", f->path, err);
      continue;
    }
    for (size_t i = 0; i < rs->ns; i++) {
      rsession *s = &rs->s[i];
      if (s->file != fi || !s->keep || !s->reaped_here)
        continue;
      if (!pt_set_exit_status(&db, s->info.id, s->code, err, sizeof err))
        fprintf(stderr, "pitrace record: cannot store the exit status of session %lld in "
                "%s\n", (long long)s->info.id, err);
    }
    pt_close(&db);
  }
}

static void remove_file(const char *path)
{
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    char *p = xasprintf("%s%s", path, suffixes[i]);
    if (unlink(p) != 0 && errno != ENOENT)
      fprintf(stderr, "pitrace record: cannot remove %s: %s\n", p, strerror(errno));
    free(p);
  }
}

/* ---- The summary -------------------------------------------------------------- */

typedef struct colors {
  const char *bold, *red, *off;
} colors;

static const char *api_name(uint32_t id)
{
  const pi_api_desc *d = pi_api_get(id);
  return d ? d->name : "(unknown API)";
}

/* What the summary shows of a call. */
typedef struct brief_call {
  int64_t seq;
  uint32_t api;
  bool returned;
  int32_t result;
} brief_call;

static void print_call(FILE *out, const colors *c, const brief_call *call)
{
  if (call->returned)
    fprintf(out, "      #%-6lld %-32s %s%s%s\n", (long long)call->seq, api_name(call->api),
            call->result ? c->red : "", pi_result_name((pi_result)call->result),
            call->result ? c->off : "");
  else
    fprintf(out, "      #%-6lld %-32s %snever returned%s\n", (long long)call->seq,
            api_name(call->api), c->red, c->off);
}

#define PENDING_SHOWN 64 /* calls that never returned, shown however early */

/* A session's calls as the summary needs them, read one at a time (a
 * failing run's session of millions of calls is not held): the last few,
 * the first that never returned, the first that failed, and counts. */
typedef struct brief {
  brief_call last[LAST_CALLS], pending[PENDING_SHOWN], failed[ERRORS_SHOWN];
  size_t n, npending, nfailed;
} brief;

static bool read_brief(const pt_db *db, int64_t session, brief *b, char *err, size_t errn)
{
  memset(b, 0, sizeof *b);
  pt_cursor *cur = pt_cursor_open(db, session, err, errn);
  if (!cur)
    return false;
  const pt_call *call;
  while ((call = pt_cursor_next(cur, err, errn))) {
    brief_call bc = {call->seq, call->api, call->returned, call->result};
    b->last[b->n++ % LAST_CALLS] = bc;
    if (!bc.returned && b->npending++ < PENDING_SHOWN)
      b->pending[b->npending - 1] = bc;
    if (bc.returned && bc.result != PI_SUCCESS && b->nfailed++ < ERRORS_SHOWN)
      b->failed[b->nfailed - 1] = bc;
  }
  pt_cursor_close(cur);
  return !*err;
}

/* One session: how it ended, its last calls, its failed calls, where it is. */
static void summarise(FILE *out, const colors *c, const rsession *s, const rfile *f)
{
  fprintf(out, "  %s%s%s", c->bold, f->path, c->off);
  if (f->ours > 1 || f->foreign)
    fprintf(out, " --session %lld", (long long)s->info.id);
  char command[sizeof s->info.command];
  snprintf(command, sizeof command, "%s", s->info.command);
  fprintf(out, "\n    pid %lld: %s\n    %s", (long long)s->info.pid, pt_one_line(command), s->how);
  if (*s->data_cut)
    fprintf(out, "; %s", s->data_cut);
  pt_db db;
  char err[512];
  if (!pt_open(f->path, false, &db, err, sizeof err)) {
    fprintf(out, "\n    (cannot read it: %s)\n", err);
    return;
  }
  brief *b = malloc(sizeof *b);
  if (!b || !read_brief(&db, s->info.id, b, err, sizeof err)) {
    fprintf(out, "\n    (cannot read its calls: %s)\n", b ? err : "out of memory");
    free(b);
    pt_close(&db);
    return;
  }
  pt_close(&db);
  fprintf(out, "; %zu call%s, %zu failed%s\n", b->n, b->n == 1 ? "" : "s", b->nfailed,
          b->npending ? ", some never returned" : "");
  if (b->n) {
    fprintf(out, "    last calls:\n");
    /* The last few, and any call that never returned however early (the
     * first PENDING_SHOWN of them), in order. */
    size_t nlast = b->n < LAST_CALLS ? b->n : LAST_CALLS, p = 0;
    int64_t from = b->last[(b->n - nlast) % LAST_CALLS].seq;
    for (; p < b->npending && p < PENDING_SHOWN && b->pending[p].seq < from; p++)
      print_call(out, c, &b->pending[p]);
    if (b->npending > PENDING_SHOWN && b->pending[PENDING_SHOWN - 1].seq < from)
      fprintf(out, "      ... (%zu calls never returned in all)\n", b->npending);
    for (size_t i = b->n - nlast; i < b->n; i++)
      print_call(out, c, &b->last[i % LAST_CALLS]);
  }
  if (b->nfailed) {
    fprintf(out, "    failed calls:\n");
    for (size_t i = 0; i < b->nfailed && i < ERRORS_SHOWN; i++)
      print_call(out, c, &b->failed[i]);
    if (b->nfailed > ERRORS_SHOWN)
      fprintf(out, "      ... and %zu more\n", b->nfailed - ERRORS_SHOWN);
  }
  free(b);
}

static int order_kept(const rsession *a, const rsession *b)
{
  /* Known failures first, then the rest in file order. */
  int fa = a->v == V_FAILED, fb = b->v == V_FAILED;
  if (fa != fb)
    return fb - fa;
  return a->file < b->file ? -1 : a->file > b->file;
}

static int cmp_kept(const void *a, const void *b)
{
  return order_kept(*(const rsession *const *)a, *(const rsession *const *)b);
}

/* Why there is no session: no process made PI calls through the runtime,
 * or those that did could not write their files (a full disk: each said
 * so as it ran, and the files are named after this). */
static void say_no_session(FILE *out, const run_state *rs, const char *who)
{
  if (rs->nu)
    fprintf(out, "pitrace record: no session was recorded: %zu session file%s of %s could not "
                 "be read (named below; the recording process said why above)\n", rs->nu,
            rs->nu == 1 ? "" : "s", who);
  else
    fprintf(out, "pitrace record: no session was recorded: no process of %s made PI calls "
                 "through the pitrace runtime\n", who);
}

static void failure_summary(const run_state *rs, const char *cmdline, int main_status,
                            const char *dir, keep_mode keep, size_t kept, size_t dropped,
                            size_t late_failed)
{
  FILE *out = stderr;
  colors c = {"", "", ""};
  if (pt_use_color(fileno(out)))
    c = (colors){"\033[1m", "\033[31m", "\033[0m"};
  char status[128];
  describe_status(status, sizeof status, main_status);
  if (status_code(main_status) == 0)
    fprintf(out, "%spitrace record: %s %s, but %zu process%s it left running failed after "
            "it%s\n", c.bold, cmdline, status, late_failed, late_failed == 1 ? "" : "es", c.off);
  else
    fprintf(out, "%spitrace record: %s %s%s\n", c.bold, cmdline, status, c.off);
  if (!rs->ns) {
    say_no_session(out, rs, "the command");
    return;
  }
  size_t failed = 0;
  for (size_t i = 0; i < rs->ns; i++)
    failed += rs->s[i].v == V_FAILED;
  fprintf(out, "pitrace record: kept %zu session%s in %s", kept, kept == 1 ? "" : "s", dir);
  if (dropped && status_code(main_status) == 0)
    fprintf(out, "; removed the run's %zu other session%s (the command succeeded)", dropped,
            dropped == 1 ? "" : "s");
  else if (dropped)
    fprintf(out, "; removed the %zu session%s of processes that succeeded", dropped,
            dropped == 1 ? "" : "s");
  else if (!failed && keep == KEEP_ON_FAILURE) /* --keep always keeps them all anyway */
    fprintf(out, "; no recorded process is known to have failed, so every session of the "
                 "run is kept");
  fputs("\n", out);
  const rsession **order = malloc(kept * sizeof *order);
  if (!order)
    return;
  size_t n = 0;
  for (size_t i = 0; i < rs->ns; i++)
    if (rs->s[i].keep)
      order[n++] = &rs->s[i];
  qsort(order, n, sizeof *order, cmp_kept);
  for (size_t i = 0; i < n && i < DETAILED; i++)
    summarise(out, &c, order[i], &rs->f[order[i]->file]);
  for (size_t i = DETAILED; i < n && i < DETAILED + LISTED; i++)
    fprintf(out, "  %s: pid %lld, %s\n", rs->f[order[i]->file].path,
            (long long)order[i]->info.pid, order[i]->how);
  if (n > DETAILED + LISTED)
    fprintf(out, "  ... and %zu more in %s\n", n - DETAILED - LISTED, dir);
  fprintf(out, "pitrace record: look closer with pitrace show FILE [--errors], pitrace "
               "report FILE -o report.html, or re-run it with pitrace replay FILE\n");
  free(order);
}

static void free_state(run_state *rs)
{
  for (size_t i = 0; i < rs->nf; i++)
    free(rs->f[i].path);
  free(rs->f);
  free(rs->s);
  free_list(rs->unreadable, rs->nu);
}

/* ---- The verb ---------------------------------------------------------------- */

int pt_record(int argc, char **argv)
{
  options o;
  int r = parse_options(argc, argv, &o);
  if (r >= 0)
    return r;
  char err[PATH_MAX + 256];
  bool created;
  if (!make_dir(o.dir, &created, err, sizeof err)) {
    fprintf(stderr, "pitrace record: %s\n", err);
    free(o.icd);
    return 2;
  }
  char dir[PATH_MAX];
  if (!realpath(o.dir, dir)) {
    fprintf(stderr, "pitrace record: %s: %s\n", o.dir, strerror(errno));
    free(o.icd);
    return 2;
  }
  size_t nbefore;
  char **before = list_sessions(dir, &nbefore);
  char run_id[64];
  snprintf(run_id, sizeof run_id, "%d-%lld", (int)getpid(), (long long)now_ns());
  char *cmdline = command_text(o.cmd);

  reaped_list rl = {.main_at = SIZE_MAX};
  int main_status = 0, exec_errno = 0;
  bool started = run_command(&o, dir, run_id, cmdline, &rl, &main_status, &exec_errno);
  int code = started ? status_code(main_status) : exec_errno == ENOENT ? 127
                                                  : exec_errno ? 126 : 2;
  if (!started && exec_errno)
    pt_say_not_run("record", o.cmd[0], exec_errno);

  run_state rs = {0};
  if (started)
    collect(&rs, dir, run_id, &rl, before, nbefore);
  bool failed = code != 0;
  bool any_failed = false;
  size_t late_failed = 0; /* processes the command left running that then failed */
  for (size_t i = 0; i < rs.ns; i++) {
    any_failed |= rs.s[i].v == V_FAILED;
    late_failed += rs.s[i].v == V_FAILED && rs.s[i].outlived;
  }
  /* A command that succeeded says nothing of the processes it left
   * running: one of them that failed is a failure of the run, kept alone. */
  bool kept_some = failed || late_failed;
  size_t kept = 0, dropped = 0;
  for (size_t i = 0; i < rs.ns; i++) {
    rsession *s = &rs.s[i];
    s->keep = o.keep == KEEP_ALWAYS || (failed && (!any_failed || s->v != V_SUCCEEDED)) ||
              (s->v == V_FAILED && s->outlived);
    kept += s->keep;
    dropped += kept_some && !s->keep;
    rs.f[s->file].keep |= s->keep;
  }
  /* A session in a file that stays (one of the file's other sessions is
   * kept, or another run's is in it) stays with it: kept, not said to be
   * removed. */
  for (size_t i = 0; i < rs.ns; i++) {
    rsession *s = &rs.s[i];
    if (!s->keep && (rs.f[s->file].keep || rs.f[s->file].foreign)) {
      s->keep = true;
      kept++;
      dropped -= kept_some;
    }
  }
  write_statuses(&rs);
  for (size_t i = 0; i < rs.nf; i++)
    if (!rs.f[i].keep && !rs.f[i].foreign)
      remove_file(rs.f[i].path);
  if (created)
    rmdir(dir); /* only when it is empty: nothing was kept, nothing else came */

  if (kept_some && started) {
    failure_summary(&rs, cmdline, main_status, dir, o.keep, kept, dropped, late_failed);
  } else if (started && rs.ns) {
    /* A recording that stopped part-way (a full disk) is no record of the
     * whole run: said here too, not only in the warning the process gave
     * when it happened, among its output. */
    size_t incomplete = 0, cut = 0;
    for (size_t i = 0; i < rs.ns; i++) {
      incomplete += rs.s[i].keep && strcmp(rs.s[i].info.ended, "incomplete") == 0;
      cut += rs.s[i].keep && *rs.s[i].data_cut;
    }
    if (kept) {
      fprintf(stderr, "pitrace record: %zu session%s in %s", kept, kept == 1 ? "" : "s", dir);
      if (incomplete && kept == 1)
        fprintf(stderr, ", incomplete: recording stopped part-way");
      else if (incomplete)
        fprintf(stderr, "; %zu of them incomplete: recording stopped part-way", incomplete);
      if (cut && kept == 1)
        fprintf(stderr, ", its data cut short on a full disk");
      else if (cut)
        fprintf(stderr, "; %zu with their data cut short on a full disk", cut);
      if (incomplete || cut)
        fprintf(stderr, " (pitrace sessions %s says why)", dir);
      fputs("\n", stderr);
    } else
      fprintf(stderr, "pitrace record: %s succeeded; its %zu session%s not kept "
              "(--keep on-failure)\n", cmdline, rs.ns, rs.ns == 1 ? " was" : "s were");
  } else if (started && o.keep == KEEP_ALWAYS) {
    say_no_session(stderr, &rs, cmdline);
  }
  for (size_t i = 0; i < rs.nu; i++)
    fprintf(stderr, "pitrace record: not a readable session: %s\n", rs.unreadable[i]);
  free_state(&rs);
  free(rl.v);
  free(cmdline);
  free(o.icd);
  free_list(before, nbefore);
  return code;
}
