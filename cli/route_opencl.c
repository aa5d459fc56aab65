/*
 * route_opencl.c: routing unmodified OpenCL applications through pitrace's
 * OpenCL front end, for `pitrace run` and `pitrace record`.
 *
 * The application's ICD loader is pointed at pitrace's vendor file only
 * (OCL_ICD_VENDORS=<prefix>/etc/OpenCL/vendors/pitrace.icd), so it sees
 * pitrace's platforms alone; the previous value, if any, is kept in
 * PITRACE_OCL_ICD_VENDORS, where pitrace's OpenCL plugin looks first for
 * the real implementations (plugins/opencl/README.md). The vendor file lies
 * beside this program's tree: <bindir>/../etc/OpenCL/vendors/, in the build
 * tree and in an installed one alike (cmake/PitraceInstall.cmake puts it
 * there, not in the system's /etc/OpenCL/vendors, where every application
 * would see it). /proc/self/exe is resolved, so a symbolic link to pitrace
 * finds the tree the program lies in. The file must name a library that
 * exists: an installed tree names its absolute path, which a move breaks.
 * Both verbs say here why a command could not be run (pt_say_not_run).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_verbs.h"
#include "pitrace_cli.h"

#define ICD_RELATIVE "/../etc/OpenCL/vendors/pitrace.icd"

/* The library an .icd file names: its first line, blanks trimmed, as the
 * ICD loader reads it (into lib, empty when there is none). */
static bool icd_library(const char *icd, char *lib, size_t libn)
{
  FILE *f = fopen(icd, "r");
  if (!f)
    return false;
  lib[0] = 0;
  if (fgets(lib, (int)libn, f)) {
    size_t len = strcspn(lib, "\r\n");
    while (len && isspace((unsigned char)lib[len - 1]))
      len--;
    lib[len] = 0;
    size_t lead = strspn(lib, " \t");
    memmove(lib, lib + lead, len - lead + 1);
  }
  fclose(f);
  return true;
}

char *pt_opencl_icd(char *err, size_t errn)
{
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n < 0) {
    snprintf(err, errn, "cannot tell where pitrace lies (/proc/self/exe: %s)", strerror(errno));
    return NULL;
  }
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash)
    *slash = 0;
  char path[PATH_MAX + sizeof ICD_RELATIVE];
  snprintf(path, sizeof path, "%s%s", self, ICD_RELATIVE);
  char *real = realpath(path, NULL);
  if (!real) {
    snprintf(err, errn, "the OpenCL front end's vendor file %s is missing (%s): build the "
             "pitrace_opencl target, or install pitrace", path, strerror(errno));
    return NULL;
  }
  /* An installed tree's file names the library where it was installed: a
   * tree moved since then would route the application to nothing. */
  char lib[PATH_MAX];
  if (!icd_library(real, lib, sizeof lib)) {
    snprintf(err, errn, "cannot read the OpenCL front end's vendor file %s: %s", real,
             strerror(errno));
  } else if (!lib[0]) {
    snprintf(err, errn, "the OpenCL front end's vendor file %s names no library", real);
  } else if (strchr(lib, '/') && access(lib, R_OK) != 0) {
    snprintf(err, errn, "the OpenCL front end's vendor file %s names %s, which is missing "
             "(%s): was the tree moved? install pitrace again where it now lies",
             real, lib, strerror(errno));
  } else {
    return real;
  }
  free(real);
  return NULL;
}

void pt_route_opencl(const char *icd)
{
  const char *prev = getenv("OCL_ICD_VENDORS");
  /* Keep what the user meant, unless it is already pitrace's own file (a
   * pitrace run inside another keeps the outer saved value). */
  if (prev && *prev) {
    char *real = realpath(prev, NULL);
    if (strcmp(prev, icd) != 0 && !(real && strcmp(real, icd) == 0))
      setenv("PITRACE_OCL_ICD_VENDORS", prev, 1);
    free(real);
  }
  setenv("OCL_ICD_VENDORS", icd, 1);
}

static const char run_usage[] =
    "usage: pitrace run [--no-opencl] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with its OpenCL calls routed through pitrace's OpenCL front end,\n"
    "without recording: the application sees pitrace's platforms, and every\n"
    "OpenCL call becomes PI calls through the runtime, so SYCL_PI_TRACE=2 prints\n"
    "them (SYCL_PI_TRACE=2 pitrace run -- clinfo). OpenCL implementations are\n"
    "those the ICD loader would have used (OCL_ICD_VENDORS or\n"
    "/etc/OpenCL/vendors); SYCL_DEVICE_FILTER narrows them.\n"
    "\n"
    "CMD gets OCL_ICD_VENDORS=<pitrace's tree>/etc/OpenCL/vendors/pitrace.icd,\n"
    "and the OCL_ICD_VENDORS it had, if any, in PITRACE_OCL_ICD_VENDORS (where\n"
    "pitrace's OpenCL plugin looks first). Exits with CMD's status (127 when CMD\n"
    "is not found, 126 when it cannot be run; 2 for a usage error, or when the\n"
    "vendor file is missing).\n"
    "\n"
    "  --no-opencl   run CMD unchanged (applications of pirt.h need no routing)\n"
    "  -h, --help    this text\n";

int pt_run(int argc, char **argv)
{
  bool no_opencl = false;
  const pt_opt opts[] = {{"--no-opencl", PT_OPT_FLAG, &no_opencl}, {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, run_usage, opts, 0, PT_ARGS_COMMAND, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (!a.cmd) {
    pt_verb_error("run", "no command to run: pitrace run [--no-opencl] -- CMD [ARGS...]");
    return 2;
  }
  if (!no_opencl) {
    char err[2 * PATH_MAX + 256];
    char *icd = pt_opencl_icd(err, sizeof err);
    if (!icd) {
      fprintf(stderr, "pitrace run: %s\n", err);
      return 2;
    }
    pt_route_opencl(icd);
    free(icd);
  }
  execvp(a.cmd[0], a.cmd);
  int e = errno;
  pt_say_not_run("run", a.cmd[0], e);
  return e == ENOENT ? 127 : 126;
}

/* The file execvp ran for `cmd`: `cmd` itself when it names a path, else
 * the first executable file of that name in PATH (NULL when none). As
 * execvp, an empty entry of PATH (PATH="", "/bin:") is the current
 * directory and only an unset PATH is /bin:/usr/bin: PATH="" said of a
 * command that is nowhere here "/bin/ls is there: the loader ... is not". */
static char *program_file(const char *cmd)
{
  if (strchr(cmd, '/'))
    return access(cmd, F_OK) == 0 ? strdup(cmd) : NULL;
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/bin:/usr/bin";;) {
    size_t n = strcspn(p, ":");
    char *f;
    if (asprintf(&f, "%.*s%s%s", (int)n, p, n ? "/" : "", cmd) < 0)
      return NULL;
    struct stat st;
    if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0)
      return f;
    free(f);
    if (!p[n])
      return NULL;
    p += n + 1;
  }
}

/* Why CMD could not be run. ENOENT for a program that is there means
 * that what it needs to start is not: its #! interpreter (or its ELF
 * loader), and "No such file or directory" alone named the wrong file. */
void pt_say_not_run(const char *verb, const char *cmd, int e)
{
  char *file = e == ENOENT ? program_file(cmd) : NULL;
  if (!file) {
    fprintf(stderr, "pitrace %s: cannot run %s: %s\n", verb, cmd, strerror(e));
    return;
  }
  char head[256] = "";
  FILE *f = fopen(file, "rb");
  size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
  if (f)
    fclose(f);
  head[n] = 0;
  if (strncmp(head, "#!", 2) == 0) {
    const char *interp = head + 2 + strspn(head + 2, " \t");
    fprintf(stderr, "pitrace %s: cannot run %s: its interpreter %.*s: %s\n", verb, cmd,
            (int)strcspn(interp, " \t\r\n"), interp, strerror(e));
  } else {
    fprintf(stderr, "pitrace %s: cannot run %s: %s (%s is there: the loader or "
            "interpreter it needs is not)\n", verb, cmd, strerror(e), file);
  }
  free(file);
}
