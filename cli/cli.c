/*
 * cli.c: what every verb of the pitrace command shares (pitrace_cli.h):
 * the one argument parser, one-line errors, whether to colour output, and
 * output files written whole or not at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pitrace_cli.h"
#include "session.h"

bool pt_use_color(int fd)
{
  const char *nc = getenv("NO_COLOR");
  return isatty(fd) && !(nc && *nc);
}

char *pt_one_line(char *s)
{
  for (char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  return s;
}

void pt_verb_error(const char *verb, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *p = msg; *p; p++) /* one line, whatever the message held */
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  fprintf(stderr, "pitrace %s: %s\n", verb, msg);
}

static unsigned files_skipped;

void pt_skip_file(const char *verb, const char *err)
{
  pt_verb_error(verb, "%s; skipped, the directory's other session files are read", err);
  files_skipped++;
}

unsigned pt_files_skipped(void) { return files_skipped; }

void pt_say_salvage_error(const char *verb, const char *err)
{
  static char said[8][256];
  static unsigned nsaid;
  for (unsigned i = 0; i < nsaid && i < 8; i++)
    if (strncmp(said[i], err, sizeof said[i] - 1) == 0)
      return;
  snprintf(said[nsaid++ % 8], sizeof said[0], "%s", err);
  if (verb)
    fprintf(stderr, "pitrace %s: %s\n", verb, err);
  else
    fprintf(stderr, "pitrace: %s\n", err);
}

bool pt_output_path_empty(const char *verb, const char *path, const char *what)
{
  if (!path || *path)
    return false;
  pt_verb_error(verb, "the output path (-o) is empty: name %s", what);
  return true;
}

/* ---- Arguments ------------------------------------------------------------------------ */

static const pt_opt *find_opt(const pt_opt *opts, const char *a, size_t n)
{
  for (; opts && opts->name; opts++)
    if (strlen(opts->name) == n && strncmp(opts->name, a, n) == 0)
      return opts;
  return NULL;
}

/* Stores an option's value; false after an error message. */
static bool set_opt(const char *verb, const pt_opt *o, const char *val)
{
  if (o->kind == PT_OPT_STR || o->kind == PT_OPT_STRS) {
    *(const char **)o->dst = val;
    return true;
  }
  char *end;
  errno = 0;
  bool ok;
  const char *want = "wants a number";
  if (o->kind == PT_OPT_REAL) {
    double v = strtod(val, &end);
    ok = *val && !*end && !errno && v >= 0 && isfinite(v); /* "inf": any difference within it */
    if (ok)
      *(double *)o->dst = v;
    else if (*val && !*end)
      want = errno == ERANGE ? "is out of range" : v < 0 ? "wants a number of 0 or more"
                                                         : "wants a finite number";
  } else {
    long long v = strtoll(val, &end, 10);
    ok = *val && !*end && !errno && v >= 0;
    if (ok)
      *(int64_t *)o->dst = v;
    else if (*val && !*end)
      want = errno == ERANGE ? "is out of range" : "wants a number of 0 or more";
  }
  if (!ok)
    pt_verb_error(verb, "bad argument '%s': %s %s", val, o->name, want);
  return ok;
}

/* One option at argv[*i]: "--name=V", "--name V", "-oV", "-o V". 0, or 2
 * after an error message. */
/* The options with a value given so far (their destinations: an option's
 * names share one). */
typedef struct seen_opts {
  const void *dst[32];
  size_t n;
} seen_opts;

static int parse_opt(int argc, char **argv, int *i, const pt_opt *opts, seen_opts *seen)
{
  const char *verb = argv[0], *a = argv[*i], *inline_val = NULL;
  size_t n;
  if (a[1] == '-') {
    const char *eq = strchr(a, '=');
    n = eq ? (size_t)(eq - a) : strlen(a);
    inline_val = eq ? eq + 1 : NULL;
  } else {
    n = 2;
    inline_val = a[2] ? a + 2 : NULL;
  }
  const pt_opt *o = find_opt(opts, a, n);
  if (!o) {
    pt_verb_error(verb, "unknown option '%.*s' (pitrace %s --help lists them)",
                  a[1] == '-' ? (int)n : (int)strlen(a), a, verb);
    return 2;
  }
  if (o->kind == PT_OPT_FLAG) {
    if (inline_val) {
      pt_verb_error(verb, "%s takes no value", o->name);
      return 2;
    }
    *(bool *)o->dst = true;
    return 0;
  }
  /* "--" after an option that takes a value ends the options: it is not
   * the value (`record -o -- CMD` made a directory named "--"). */
  const char *val = inline_val                                          ? inline_val
                    : *i + 1 < argc && strcmp(argv[*i + 1], "--") != 0 ? argv[++*i]
                                                                        : NULL;
  if (!val) {
    pt_verb_error(verb, "%s needs a value", o->name);
    return 2;
  }
  for (size_t k = 0; o->kind != PT_OPT_STRS && k < seen->n; k++)
    if (seen->dst[k] == o->dst) {
      pt_verb_error(verb, "%s is given twice: give it once (pitrace %s --help)", o->name, verb);
      return 2;
    }
  if (seen->n < sizeof seen->dst / sizeof *seen->dst)
    seen->dst[seen->n++] = o->dst;
  return set_opt(verb, o, val) ? 0 : 2;
}

int pt_parse(int argc, char **argv, const char *usage, const pt_opt *opts, int minpos,
             int maxpos, pt_args *out)
{
  const char *verb = argv[0];
  bool command = maxpos == PT_ARGS_COMMAND, options = true;
  seen_opts seen = {.n = 0};
  out->npos = 0;
  out->cmd = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (options && strcmp(a, "--") == 0) {
      options = false;
      if (command) {
        out->cmd = i + 1 < argc ? argv + i + 1 : NULL;
        return 0;
      }
      continue;
    }
    if (options && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
      fputs(usage, stdout);
      return 1;
    }
    if (options && a[0] == '-' && a[1]) {
      int rc = parse_opt(argc, argv, &i, opts, &seen);
      if (rc)
        return rc;
      continue;
    }
    if (command) {
      out->cmd = argv + i;
      return 0;
    }
    if (out->npos == maxpos || out->npos == PT_ARGS_MAX) {
      pt_verb_error(verb, "unexpected argument '%s' (pitrace %s --help)", a, verb);
      return 2;
    }
    out->pos[out->npos++] = a;
  }
  if (!command && out->npos < minpos) {
    const char *nl = strchr(usage, '\n');
    pt_verb_error(verb, "missing argument; %.*s",
                  nl ? (int)(nl - usage) : (int)strlen(usage), usage);
    return 2;
  }
  return 0;
}

/* The file pt_tmp_make guards, and its journal; what the signals
 * did before. */
static char guarded[2][PATH_MAX + 32];
static volatile sig_atomic_t guarding;
static const int guard_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};
static struct sigaction guard_old[sizeof guard_signals / sizeof *guard_signals];
static bool guard_set[sizeof guard_signals / sizeof *guard_signals];

static void remove_guarded(int sig)
{
  if (guarding) {
    unlink(guarded[0]);
    unlink(guarded[1]);
  }
  signal(sig, SIG_DFL);
  raise(sig); /* delivered once the handler returns: the program ends by it */
}

static void guard(const char *tmp)
{
  pt_tmp_unguard();
  if (strlen(tmp) >= sizeof guarded[0] - sizeof "-journal")
    return; /* no such file could be made */
  snprintf(guarded[0], sizeof guarded[0], "%s", tmp);
  snprintf(guarded[1], sizeof guarded[1], "%s-journal", tmp);
  guarding = 1;
  struct sigaction sa = {.sa_handler = remove_guarded};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof guard_signals / sizeof *guard_signals; i++)
    guard_set[i] = sigaction(guard_signals[i], NULL, &guard_old[i]) == 0 &&
                   guard_old[i].sa_handler != SIG_IGN &&
                   sigaction(guard_signals[i], &sa, NULL) == 0;
}

int pt_tmp_make(char *tmp)
{
  /* Held off until the file is guarded: a signal between the two left it. */
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < sizeof guard_signals / sizeof *guard_signals; i++)
    sigaddset(&block, guard_signals[i]);
  /* A FILE whose name fits where FILE.tmp-XXXXXX's (or its journal's)
   * would not: the start of FILE's name (export and extract refused a
   * name of 245 to 255 bytes). */
  const size_t suffix = sizeof ".tmp-XXXXXX" - 1, most = NAME_MAX - (sizeof "-journal" - 1);
  char *base = strrchr(tmp, '/');
  base = base ? base + 1 : tmp;
  size_t len = strlen(base);
  if (len > most && len - suffix <= NAME_MAX)
    memmove(base + most - suffix, base + len - suffix, suffix + 1);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd >= 0)
    guard(tmp);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return fd;
}

void pt_tmp_unguard(void)
{
  for (size_t i = 0; i < sizeof guard_signals / sizeof *guard_signals; i++)
    if (guard_set[i])
      sigaction(guard_signals[i], &guard_old[i], NULL);
  memset(guard_set, 0, sizeof guard_set);
  guarding = 0;
}

/* The output's writes, through a FILE that keeps why the first one failed
 * (stdio keeps only that one did). */
static ssize_t outfile_write(void *cookie, const char *buf, size_t n)
{
  pt_outfile *o = cookie;
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(o->fd, buf + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (!o->err)
        o->err = w < 0 ? errno : ENOSPC;
      return done ? (ssize_t)done : -1;
    }
    done += (size_t)w;
  }
  return (ssize_t)done;
}

static int outfile_close(void *cookie)
{
  pt_outfile *o = cookie;
  if (close(o->fd) != 0 && !o->err) {
    o->err = errno;
    return -1;
  }
  return 0;
}

static bool outfile_stream(pt_outfile *o, int fd)
{
  o->fd = fd;
  o->f = fopencookie(o, "w", (cookie_io_functions_t){.write = outfile_write,
                                                      .close = outfile_close});
  if (!o->f)
    close(fd);
  return o->f != NULL;
}

static pt_outfile std_out = {.fd = -1};

void pt_stdout_keep_errors(void)
{
  std_out.fd = STDOUT_FILENO;
  /* No close function: descriptor 1 stays open for whatever else writes to
   * it (a program record or run starts). */
  FILE *f = fopencookie(&std_out, "w", (cookie_io_functions_t){.write = outfile_write});
  if (!f)
    return; /* stdout as it was: a failed write is still said, only not why */
  /* Buffered as stdio buffers the standard output: by line on a terminal. */
  setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  std_out.f = stdout = f;
}

int pt_stdout_error(void) { return std_out.err; }

/* The input that writing the file at `path` would replace: the same file
 * (under another name, or through a link), or a session file (by the
 * directory reader's rule) of a directory being read; NULL when none. */
static const char *input_replaced(const char *path, const pt_args *in, bool *in_dir)
{
  struct stat out, st, ds;
  if (!in || stat(path, &out) != 0 || !S_ISREG(out.st_mode))
    return NULL;
  char *real = realpath(path, NULL);
  char *slash = real ? strrchr(real, '/') : NULL;
  bool session_name = slash && pt_session_file_name(slash + 1);
  if (slash)
    *(slash == real ? slash + 1 : slash) = 0; /* its directory */
  bool have_dir = slash && stat(real, &ds) == 0;
  free(real);
  for (int i = 0; i < in->npos; i++) {
    if (stat(in->pos[i], &st) != 0)
      continue;
    *in_dir = S_ISDIR(st.st_mode);
    if (S_ISREG(st.st_mode) && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      return in->pos[i];
    if (*in_dir && have_dir && st.st_dev == ds.st_dev && st.st_ino == ds.st_ino && session_name)
      return in->pos[i];
  }
  return NULL;
}

int pt_own_fd(const char *path)
{
  if (strcmp(path, "/dev/stdout") == 0)
    return STDOUT_FILENO;
  if (strcmp(path, "/dev/stderr") == 0)
    return STDERR_FILENO;
  const char *n = strncmp(path, "/dev/fd/", 8) == 0         ? path + 8
                  : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                             : NULL;
  if (!n || *n < '0' || *n > '9')
    return -1;
  char *end;
  errno = 0;
  long v = strtol(n, &end, 10);
  return *end || errno || v > INT_MAX ? -1 : (int)v;
}

bool pt_outfile_open(const char *verb, const char *path, const pt_args *inputs, pt_outfile *o)
{
  *o = (pt_outfile){.f = stdout, .path = path, .fd = -1};
  int own = path ? pt_own_fd(path) : -1;
  if (!path || strcmp(path, "-") == 0 || own == STDOUT_FILENO)
    return true;
  o->f = NULL;
  /* One of the program's descriptors is written as it is open: taken for
   * the file it leads to, that file was replaced (`-o /dev/stdout >> log`
   * lost the log, and what the shell wrote there after). */
  if (own >= 0) {
    int fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || !outfile_stream(o, fd)) {
      pt_verb_error(verb, "cannot write %s: %s", path, strerror(errno));
      return false;
    }
    return true;
  }
  bool in_dir = false;
  const char *input = input_replaced(path, inputs, &in_dir);
  if (input) {
    if (in_dir)
      pt_verb_error(verb, "-o %s is a session file in %s, which is being read: name another file",
                    path, input);
    else
      pt_verb_error(verb, "-o %s is %s, which is being read: name another file", path,
                    strcmp(input, path) == 0 ? "the session file" : input);
    return false;
  }
  struct stat st;
  int fd = -1;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      pt_verb_error(verb, "cannot write %s: it is a directory; name a file", path);
      return false;
    }
    fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC); /* a device or a pipe: as it is */
  } else {
    /* A link to a file: that file is written (beside it, and renamed over
     * it), the link stays. */
    struct stat lst;
    bool link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) == 0;
    o->target = link ? realpath(path, NULL) : strdup(path);
    size_t n = o->target ? strlen(o->target) + sizeof ".tmp-XXXXXX" : 0;
    o->tmp = n ? malloc(n) : NULL;
    if (!o->tmp) {
      pt_verb_error(verb, "out of memory");
      free(o->target);
      o->target = NULL;
      return false;
    }
    snprintf(o->tmp, n, "%s.tmp-XXXXXX", o->target);
    o->existed = access(path, F_OK) == 0;
    fd = pt_tmp_make(o->tmp);
    if (fd >= 0) {
      /* A new file gets the mode fopen would give it; one being replaced
       * keeps its own. */
      mode_t um = umask(0);
      umask(um);
      if (fchmod(fd, stat(path, &st) == 0 ? st.st_mode & 07777 : 0666 & ~um) != 0) {
        /* the file is written all the same, with mkstemp's 0600 */
      }
    } else {
      int made = errno; /* said when FILE cannot be written either, not access's ENOENT */
      if (access(path, W_OK) == 0) {
        /* A file that may be written in a directory that may not. */
        free(o->tmp);
        o->tmp = NULL;
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
      } else {
        errno = made;
      }
    }
  }
  int e = errno;
  if (fd < 0 || !outfile_stream(o, fd)) {
    pt_verb_error(verb, "cannot write %s: %s", path, strerror(fd < 0 ? e : errno));
    if (o->tmp) {
      unlink(o->tmp);
      pt_tmp_unguard();
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return false;
  }
  return true;
}

bool pt_outfile_close(const char *verb, pt_outfile *o, bool ok)
{
  if (o->f == stdout) {
    /* main (pitrace.c) checks the standard output once every verb ends */
    o->f = NULL;
    return ok;
  }
  if (ok) {
    ok = fflush(o->f) == 0 && !ferror(o->f);
    ok = fclose(o->f) == 0 && ok;
    int e = o->err;
    if (ok && o->tmp && rename(o->tmp, o->target) != 0) {
      e = errno;
      ok = false;
    }
    if (!ok)
      pt_verb_error(verb, "writing %s failed%s%s%s", o->path, e ? ": " : "", e ? strerror(e) : "",
                    !o->tmp       ? ""
                    : o->existed ? "; the file is left as it was"
                                 : "; no file was made");
  } else {
    fclose(o->f);
  }
  if (!ok && o->tmp)
    unlink(o->tmp);
  if (o->tmp)
    pt_tmp_unguard();
  free(o->tmp);
  free(o->target);
  o->tmp = o->target = NULL;
  o->f = NULL;
  return ok;
}
