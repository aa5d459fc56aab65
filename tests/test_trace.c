/*
 * test_trace.c: SYCL_PI_TRACE on real PoCL calls: the level-2 call blocks,
 * every argument by name and type, levels 1 and -1, the trace file, and
 * threads whose blocks must never tear.
 *
 * Each Criterion test runs in its own process, so each sets its own
 * SYCL_PI_TRACE before its first runtime call.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pirt.h"
#include "testutil.h"

#define TRY(call) cr_assert_eq((call), PI_SUCCESS, "%s", pirt_error_message())

static char *trace_to_file(const char *level)
{
  char *path = tu_temp_path(".trace");
  setenv("SYCL_PI_TRACE", level, 1);
  setenv("SYCL_PI_TRACE_FILE", path, 1);
  return path;
}

static const char *source =
    "__kernel void add1(__global int *a) { a[get_global_id(0)] += 1; }\n";

/* A small real workload: a kernel over a buffer, read back. */
static void workload(void)
{
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *buf;
  pirt_program *prog;
  pirt_kernel *k;
  int data[64];
  for (int i = 0; i < 64; i++)
    data[i] = i;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_COPY_HOST, sizeof data, data, &buf));
  TRY(pirt_program_create_source(ctx, source, NULL, &prog));
  TRY(pirt_kernel_create(prog, "add1", &k));
  TRY(pirt_kernel_set_buffer(k, 0, buf));
  size_t global = 64;
  TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, buf, true, 0, sizeof data, data, 0, NULL, NULL));
  for (int i = 0; i < 64; i++)
    cr_assert_eq(data[i], i + 1);
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(prog));
  TRY(pirt_buffer_release(buf));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
}

/* The block of the first call to `api` in the trace. */
static char *block_of(const char *trace, const char *api)
{
  char head[128];
  snprintf(head, sizeof head, "---> %s(", api);
  const char *s = strstr(trace, head);
  cr_assert(s, "no %s in the trace", api);
  const char *e = strstr(s, "\n\n");
  cr_assert(e, "unterminated block for %s", api);
  return strndup(s, (size_t)(e - s + 1));
}

Test(trace, level2_prints_every_call_with_typed_arguments)
{
  char *path = trace_to_file("2");
  workload();
  char *t = (pirt_trace_flush(), tu_read_file(path));
  cr_assert(t);
  cr_assert_null(strstr(t, "<unknown>"), "an argument printed as <unknown>");
  cr_assert_null(strstr(t, "SYCL_PI_TRACE[basic]"), "level 1 lines at level 2");
  cr_assert_null(strstr(t, "device time"), "device times without SYCL_PI_RECORD_PROFILE");

  char *b = block_of(t, "piPlatformsGet");
  cr_assert(strstr(b, "\tpi_uint32 num_entries : 0\n\tpi_platform * platforms : NULL\n"
                      "\tpi_uint32 * num_platforms : 0x"), "%s", b);
  cr_assert(strstr(b, ") ---> \tpi_result : PI_SUCCESS\n"), "%s", b);
  cr_assert(strstr(b, "\t[out]pi_uint32 * num_platforms : 0x"), "%s", b);

  b = block_of(t, "piDeviceGetInfo");
  cr_assert(strstr(b, "\tpi_device_info param_name : PI_DEVICE_INFO_TYPE\n"), "%s", b);
  cr_assert(strstr(b, "[ PI_DEVICE_TYPE_CPU ]"), "%s", b);

  const char *name = strstr(t, "param_name : PI_DEVICE_INFO_NAME\n\tsize_t param_value_size : 0\n");
  cr_assert(name, "no size query of the device name");
  cr_assert(strstr(t, "\t[out]void * param_value : 0x"), "%s", t);

  b = block_of(t, "piMemBufferCreate");
  cr_assert(strstr(b, "\tpi_mem_flags flags : PI_MEM_FLAGS_ACCESS_RW|PI_MEM_FLAGS_HOST_PTR_COPY\n"),
            "%s", b);
  cr_assert(strstr(b, "\tsize_t size : 256\n"), "%s", b);
  cr_assert(strstr(b, "\tvoid * host_ptr : 0x"), "%s", b);
  cr_assert(strstr(b, "(256 bytes: 00 00 00 00 01 00 00 00"), "%s", b);

  b = block_of(t, "piclProgramCreateWithSource");
  cr_assert(strstr(b, "\tconst char ** strings : 0x"), "%s", b);
  cr_assert(strstr(b, "[ \"__kernel void add1"), "%s", b);

  b = block_of(t, "piKernelCreate");
  cr_assert(strstr(b, "\tconst char * kernel_name : \"add1\"\n"), "%s", b);

  b = block_of(t, "piEnqueueKernelLaunch");
  cr_assert(strstr(b, "\tpi_uint32 work_dim : 1\n"), "%s", b);
  cr_assert(strstr(b, "\tconst size_t * global_work_offset : NULL\n"), "%s", b);
  cr_assert(strstr(b, "\tconst size_t * global_work_size : 0x"), "%s", b);
  cr_assert(strstr(b, "[ 64 ]\n"), "%s", b);
  cr_assert(strstr(b, "\tpi_uint32 num_events_in_wait_list : 0\n"), "%s", b);

  b = block_of(t, "piEnqueueMemBufferRead");
  cr_assert(strstr(b, "\tpi_bool blocking_read : true\n"), "%s", b);
  cr_assert(strstr(b, "\t[out]void * ptr : 0x"), "%s", b);
  cr_assert(strstr(b, "(256 bytes: 01 00 00 00 02 00 00 00"), "%s", b);

  /* Every entry has its exit, and all succeeded. */
  int entries = tu_count(t, "\n---> ") + (strncmp(t, "---> ", 5) == 0);
  cr_assert_gt(entries, 20);
  cr_assert_eq(tu_count(t, ") ---> \tpi_result : "), entries);
  cr_assert_eq(tu_count(t, ") ---> \tpi_result : PI_SUCCESS"), entries);
  unlink(path);
}

/* A non-blocking read's bytes are the device's to write until it
 * completes: the trace printed them as the call returned (whatever the
 * memory held then, read while the device wrote it). */
Test(trace, a_non_blocking_read_does_not_show_bytes_not_written_yet)
{
  char *path = trace_to_file("2");
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *buf;
  pirt_event *ev;
  int data[64] = {0}, back[64];
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_COPY_HOST, sizeof data, data, &buf));
  TRY(pirt_read(q, buf, false, 0, sizeof back, back, 0, NULL, &ev));
  TRY(pirt_event_wait(1, &ev));
  TRY(pirt_event_release(ev));
  TRY(pirt_buffer_release(buf));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  char *t = (pirt_trace_flush(), tu_read_file(path));
  char *b = block_of(t, "piEnqueueMemBufferRead");
  cr_assert(strstr(b, "\tpi_bool blocking_read : false\n"), "%s", b);
  cr_assert(strstr(b, "\t[out]void * ptr : 0x") &&
            strstr(b, " (written when the command completes)\n") && !strstr(b, "bytes:"),
            "%s", b);
  unlink(path);
}

Test(trace, level1_names_plugins_and_the_chosen_device)
{
  char *path = trace_to_file("1");
  workload();
  char *t = (pirt_trace_flush(), tu_read_file(path));
  cr_assert(strstr(t, "SYCL_PI_TRACE[basic]: Plugin found and successfully loaded: "), "%s", t);
  cr_assert(strstr(t, "SYCL_PI_TRACE[basic]: Selected device: opencl:cpu:0 \""), "%s", t);
  cr_assert_null(strstr(t, "---> "), "call blocks at level 1");
  unlink(path);
}

Test(trace, level_minus1_adds_debug_lines)
{
  char *path = trace_to_file("-1");
  workload();
  char *t = (pirt_trace_flush(), tu_read_file(path));
  cr_assert(strstr(t, "SYCL_PI_TRACE[debug]: runtime state created"), "%s", t);
  cr_assert(strstr(t, "---> piKernelCreate("), "%s", t);
  cr_assert(strstr(t, "SYCL_PI_TRACE[basic]: Selected device"), "%s", t);
  unlink(path);
}

Test(trace, failed_calls_show_their_error)
{
  char *path = trace_to_file("2");
  pirt_device *dev;
  pirt_context *ctx;
  pirt_program *prog;
  pirt_kernel *k;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_program_create_source(ctx, source, NULL, &prog));
  cr_assert_neq(pirt_kernel_create(prog, "no_such_kernel", &k), PI_SUCCESS);
  cr_assert(strstr(pirt_error_message(), "no kernel 'no_such_kernel'"), "%s",
            pirt_error_message());
  char *t = (pirt_trace_flush(), tu_read_file(path));
  char *b = block_of(t, "piKernelCreate");
  cr_assert(strstr(b, ") ---> \tpi_result : PI_ERROR_INVALID_KERNEL_NAME\n"), "%s", b);
  cr_assert_null(strstr(b, "[out]"), "out values of a failed call: %s", b);
  unlink(path);
}

Test(trace, stdout_is_the_default_and_keeps_order_with_the_application)
{
  const char *argv[] = {PITRACE_BIN_DIR "/use_device", NULL};
  const char *env[] = {"SYCL_PI_TRACE=2", "SYCL_PI_TRACE_FILE=", NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  const char *sel = strstr(out, "use_device: selected");
  const char *ctx = strstr(out, "---> piContextCreate(");
  const char *made = strstr(out, "use_device: context created");
  cr_assert(sel && ctx && made && sel < ctx && ctx < made, "%s", out);
}

Test(trace, unwritable_file_falls_back_to_stdout_with_a_warning)
{
  const char *argv[] = {PITRACE_BIN_DIR "/use_device", NULL};
  const char *env[] = {"SYCL_PI_TRACE=2", "SYCL_PI_TRACE_FILE=/nonexistent/dir/t", NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "pitrace: cannot open SYCL_PI_TRACE_FILE=/nonexistent/dir/t: "
                        "No such file or directory; tracing to stdout"), "%s", out);
  cr_assert(strstr(out, "---> piContextCreate("), "%s", out);
}

/* SYCL_PI_TRACE_FILE naming a FIFO that nobody reads yet: the program
 * waits at its first call until something opens it for reading, as
 * open(2) does, and says so first (it looked hung, without a word); the
 * reader then gets the whole trace. */
Test(trace, a_fifo_nobody_reads_yet_is_said_before_the_program_waits_for_a_reader)
{
  char *fifo = tu_temp_path(".fifo"), *log = tu_temp_path(".out");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    setenv("SYCL_PI_TRACE", "1", 1);
    setenv("SYCL_PI_TRACE_FILE", fifo, 1);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(PITRACE_BIN_DIR "/use_device", "use_device", (char *)NULL);
    _exit(127);
  }
  char *said = NULL;
  for (int i = 0; i < 200 && !(said && strstr(said, "is a FIFO that nobody reads yet")); i++) {
    struct timespec nap = {0, 20000000};
    nanosleep(&nap, NULL);
    free(said);
    said = tu_read_file(log);
  }
  int fd = open(fifo, O_RDONLY); /* the program goes on */
  cr_assert_geq(fd, 0);
  char trace[1 << 16];
  size_t got = 0;
  ssize_t r;
  while (got < sizeof trace - 1 && (r = read(fd, trace + got, sizeof trace - 1 - got)) > 0)
    got += (size_t)r;
  trace[got] = 0;
  close(fd);
  int st;
  waitpid(pid, &st, 0);
  cr_assert(said && strstr(said, "pitrace: SYCL_PI_TRACE_FILE="), "%s", said ? said : "");
  cr_assert(strstr(said, "the program waits until something opens it for reading"), "%s", said);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, tu_read_file(log));
  cr_assert(strstr(trace, "SYCL_PI_TRACE[basic]: Plugin found and successfully loaded"), "%s",
            trace);
  unlink(fifo);
}

/* A trace that cannot be written (a full disk: /dev/full, written block
 * by block at once; a regular file past a file size limit, written from
 * the thread's buffer) never hurts the application, and is said once on
 * stderr with the reason (before, the trace stopped without a word). */
Test(trace, a_trace_that_cannot_be_written_is_said_once_and_the_program_goes_on)
{
  struct stat full;
  if (stat("/dev/full", &full) != 0 || !S_ISCHR(full.st_mode))
    cr_skip_test("no /dev/full device here to write into");
  char *path = tu_temp_path(".trace");
  char *file_kv = malloc(strlen(path) + 32);
  sprintf(file_kv, "SYCL_PI_TRACE_FILE=%s", path);
  const struct {
    const char *shell, *file, *why;
  } cases[] = {{"exec \"$0\"", "SYCL_PI_TRACE_FILE=/dev/full", "(No space left on device)"},
               {"ulimit -f 2; exec \"$0\"", file_kv, "(File too large)"}};
  for (size_t k = 0; k < 2; k++) {
    const char *argv[] = {"/bin/sh", "-c", cases[k].shell, PITRACE_BIN_DIR "/use_device", NULL};
    const char *env[] = {"SYCL_PI_TRACE=2", cases[k].file, NULL};
    char *out;
    int st = tu_run(argv, env, &out);
    cr_assert_eq(st, 0, "%s: %s", cases[k].file, out);
    cr_assert(strstr(out, "use_device: context created"), "%s", out);
    cr_assert_eq(tu_count(out, "pitrace: writing the trace to "), 1, "%s", out);
    cr_assert(strstr(out, cases[k].file + strlen("SYCL_PI_TRACE_FILE=")) &&
              strstr(out, cases[k].why), "%s", out);
  }
  struct stat st;
  cr_assert(stat(path, &st) == 0 && st.st_size <= 2048, "the limit was not in force");
  /* Blocks that would pass the limit are left out whole (the file used to
   * end in half a block). A call's entry is a block of its own, which the
   * flusher writes while the call runs (a call that hangs shows): the file
   * may end with one whose return did not fit (PoCL's first
   * piPlatformsGet, over 100 ms on a loaded machine). */
  char *t = tu_read_file(path);
  size_t len = strlen(t);
  size_t at = len >= 2 ? len - 2 : 0; /* where the last block begins */
  while (at >= 2 && !(t[at - 1] == '\n' && t[at - 2] == '\n'))
    at--;
  const char *last = at >= 2 ? t + at : t;
  bool whole = len >= 2 && strcmp(t + len - 2, "\n\n") == 0;
  bool entry = strncmp(last, "---> ", 5) == 0 && !strstr(last, ") ---> ") &&
               t[len - 1] == '\n';
  cr_assert(len == 0 || whole || entry, "cut: %s", t);
  unlink(path);
}

Test(trace, bad_level_is_reported_and_ignored)
{
  const char *argv[] = {PITRACE_BIN_DIR "/use_device", NULL};
  /* Words, numbers past an int (4294967298 was level 2, a longer one
   * wrapped to -1: everything) and octal-looking ones (010 was 8: tracing
   * silently off), and blanks on either side (" 2" traced, "2 " did not). */
  const char *bad[] = {"verbose", "4294967298", "99999999999999999999", "010", "0x2", " 2", "2 "};
  for (int i = 0; i < 7; i++) {
    char kv[64];
    snprintf(kv, sizeof kv, "SYCL_PI_TRACE=%s", bad[i]);
    const char *env[] = {kv, NULL};
    char *out, want[128];
    int st = tu_run(argv, env, &out);
    cr_assert_eq(st, 0, "%s", out);
    snprintf(want, sizeof want, "pitrace: SYCL_PI_TRACE=%s is not a trace level", bad[i]);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert_null(strstr(out, "---> "), "%s", out);
    cr_assert_null(strstr(out, "SYCL_PI_TRACE["), "%s", out);
  }
}

#define THREADS 8
#define CALLS 200

static void *query_loop(void *arg)
{
  pirt_device *dev = arg;
  for (int i = 0; i < CALLS; i++) {
    pi_uint32 units = 0;
    if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units,
                          &units, NULL) != PI_SUCCESS || units == 0)
      return (void *)1;
  }
  return NULL;
}

Test(trace, blocks_from_eight_threads_never_tear)
{
  char *path = trace_to_file("2");
  pirt_device *dev;
  TRY(pirt_device_select(NULL, &dev));
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    cr_assert_eq(pthread_create(&th[i], NULL, query_loop, dev), 0);
  for (int i = 0; i < THREADS; i++) {
    void *ret;
    pthread_join(th[i], &ret);
    cr_assert_null(ret, "a query failed");
  }
  char *t = (pirt_trace_flush(), tu_read_file(path));
  /* Each thread's calls alternate entry, exit; every block is whole. */
  int open_by[THREADS + 2] = {0}, seen = 0, exits_by[THREADS + 2] = {0};
  char *save = NULL;
  enum { NONE, ENTRY, EXIT } in = NONE;
  bool tagged = false; /* the main thread's calls before the others start */
  for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned tid = 0;
    const char *tag = strstr(line, " [thread ");
    if (tag)
      tid = (unsigned)atoi(tag + 9);
    if (!tagged && !tag)
      continue;
    tagged = true;
    if (strncmp(line, "---> ", 5) == 0) {
      cr_assert(tag && tid <= THREADS + 1, "untagged entry: %s", line);
      cr_assert_eq(open_by[tid], 0, "thread %u entered twice: %s", tid, line);
      open_by[tid] = 1;
      in = ENTRY;
    } else if (strncmp(line, ") ---> ", 7) == 0) {
      cr_assert(tag, "untagged exit: %s", line);
      cr_assert_eq(open_by[tid], 1, "exit without entry for thread %u", tid);
      open_by[tid] = 0;
      in = EXIT;
      seen++;
      exits_by[tid]++;
    } else {
      cr_assert(line[0] == '\t' && in != NONE, "torn line: '%s'", line);
      cr_assert(strncmp(line, "\t[out]", 6) != 0 || in == EXIT, "[out] in an entry");
    }
  }
  /* Every call exactly once: the main thread's first call tags nothing
   * (it was alone), each query thread made CALLS queries. */
  int query_threads = 0;
  for (int i = 0; i < THREADS + 2; i++) {
    cr_assert_eq(open_by[i], 0, "thread %d's last call has no exit", i);
    if (exits_by[i]) {
      cr_assert_eq(exits_by[i], CALLS, "thread %d: %d exits, not %d", i, exits_by[i], CALLS);
      query_threads++;
    }
  }
  cr_assert_eq(query_threads, THREADS);
  cr_assert_eq(seen, THREADS * CALLS);
  unlink(path);
}

/* The trace file is buffered per thread; a program that ends with _exit
 * (no atexit, no destructors) or crashes inside a PI call still leaves
 * every block, the crashing call's entry included. */
static char *run_trace_end(const char *how, int calls, int *status)
{
  char *path = tu_temp_path(".trace"), n[16];
  snprintf(n, sizeof n, "%d", calls);
  const char *argv[] = {PITRACE_BIN_DIR "/trace_end", how, n, NULL};
  char *file_kv = malloc(strlen(path) + 32);
  sprintf(file_kv, "SYCL_PI_TRACE_FILE=%s", path);
  const char *env[] = {"SYCL_PI_TRACE=2", file_kv, NULL};
  char *out;
  *status = tu_run(argv, env, &out);
  char *t = tu_read_file(path);
  cr_assert(t, "no trace file; output: %s", out);
  unlink(path);
  return t;
}

/* Lines of t that start with `prefix`. */
static int lines_starting(const char *t, const char *prefix)
{
  int n = 0;
  size_t l = strlen(prefix);
  for (const char *p = t; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    n += strncmp(p, prefix, l) == 0;
  return n;
}

Test(trace, a_program_ending_with_exit_underscore_keeps_every_line)
{
  int st;
  /* The device selection's own queries, then the program's 1000. */
  char *base = run_trace_end("exit", 0, &st);
  cr_assert_eq(st, 7, "exit status %d", st);
  char *t = run_trace_end("exit", 1000, &st);
  cr_assert_eq(st, 7, "exit status %d", st);
  const char *units = "\tpi_device_info param_name : PI_DEVICE_INFO_MAX_COMPUTE_UNITS\n";
  cr_assert_eq(tu_count(t, units), tu_count(base, units) + 1000);
  /* Every block whole: each entry has its exit, the file ends a block. */
  cr_assert_eq(lines_starting(t, "---> "), lines_starting(t, ") ---> "));
  size_t len = strlen(t);
  cr_assert(len >= 2 && strcmp(t + len - 2, "\n\n") == 0, "the last block is cut");
}

/* A program whose own handler takes a timer's SIGALRM every 100 us:
 * every block once, and no slower than it can be. The trace's handler
 * wrote the buffers at each signal, waiting for the lock of the buffer
 * the interrupted thread itself was writing into (1 M calls took 21 s
 * instead of 0.25 with 10 signals a second; at 5 kHz it never ended), and
 * when it gave up wrote that buffer's blocks twice. Now a signal the
 * application handles and goes on after leaves the buffers to the
 * flusher. */
/* trace_end `how` with `calls` queries ends with status 0 and its trace
 * holds each of them once, beside the device selection's own, every
 * entry with its exit. */
static void each_query_once(const char *how, int calls)
{
  int st;
  char *base = run_trace_end("exit", 0, &st);
  char *t = run_trace_end(how, calls, &st);
  cr_assert_eq(st, 0, "%s: status %d", how, st);
  const char *units = "\tpi_device_info param_name : PI_DEVICE_INFO_MAX_COMPUTE_UNITS\n";
  cr_assert_eq(tu_count(t, units), tu_count(base, units) + calls, "%s", how);
  cr_assert_eq(lines_starting(t, "---> "), lines_starting(t, ") ---> "), "%s", how);
}

Test(trace, a_timer_signal_the_program_handles_writes_every_block_once)
{
  each_query_once("alarms", 20000);
}

/* A forked child's blocks reach the file while it runs: it has a flusher
 * of its own (it had none, and a child killed half a second after its
 * calls left none of them). Each of its blocks carries its pid (they
 * sat untagged among its parent's, which is single-threaded here). */
Test(trace, a_forked_child_killed_after_its_calls_keeps_them)
{
  each_query_once("forkkill", 50);
  int st;
  char *t = run_trace_end("forkkill", 50, &st);
  cr_assert_eq(lines_starting(t, "---> piDeviceGetInfo( [pid "), 50, "%s", t);
  cr_assert_eq(lines_starting(t, ") ---> piDeviceGetInfo [pid "), 50, "%s", t);
  cr_assert_eq(tu_count(t, " [pid "), 100, "only the child's blocks are tagged:\n%s", t);
  cr_assert_eq(tu_count(t, " [thread "), 0, "%s", t);
}

Test(trace, a_crash_inside_a_call_keeps_its_entry)
{
  int st;
  char *t = run_trace_end("crash", 100, &st);
  cr_assert_eq(st, 128 + SIGSEGV, "status %d", st);
  const char *last = strstr(t, "PI_DEVICE_INFO_VENDOR_ID");
  cr_assert(last, "the crashing call's entry is missing:\n%s", t);
  cr_assert(strstr(last, "\tvoid * param_value : 0x10\n"), "%s", last);
  cr_assert_null(strstr(last, ") --->"), "the crashing call returned?\n%s", last);
  cr_assert_eq(lines_starting(t, "---> "), lines_starting(t, ") ---> ") + 1);
}

/* A call given memory at a bad address: its entry is in the trace, to the
 * point where showing that memory faulted, and said so (`line`, the
 * parameter's line without its end). The trace read it to show it and
 * faulted before the block was written: the crashing call was missing,
 * from a file and from stdout alike. */
static void check_cut_entry(const char *t, const char *call, const char *line)
{
  const char *last = strstr(t, call);
  cr_assert(last, "the crashing call's entry is missing:\n%s", t);
  char want[256];
  snprintf(want, sizeof want, "%s<unreadable: the process faulted reading this>\n", line);
  cr_assert(strstr(last, want), "%s", last);
  cr_assert_null(strstr(last, ") --->"), "the crashing call returned?\n%s", last);
}

#define BADHOST_LINE "\tvoid * host_ptr : 0x40 (4096 bytes: "

Test(trace, a_fault_reading_a_calls_bytes_keeps_its_entry_in_a_file)
{
  int st;
  char *t = run_trace_end("badhost", 10, &st);
  cr_assert_eq(st, 128 + SIGSEGV, "status %d", st);
  check_cut_entry(t, "---> piMemBufferCreate(", BADHOST_LINE);
}

Test(trace, a_fault_reading_a_calls_bytes_keeps_its_entry_on_stdout)
{
  const char *argv[] = {PITRACE_BIN_DIR "/trace_end", "badhost", "10", NULL};
  const char *env[] = {"SYCL_PI_TRACE=2", NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 128 + SIGSEGV, "status %d", st);
  check_cut_entry(out, "---> piMemBufferCreate(", BADHOST_LINE);
}

/* The same for a property list at a bad address. */
Test(trace, a_fault_reading_a_calls_property_list_keeps_its_entry)
{
  int st;
  char *t = run_trace_end("badprops", 3, &st);
  cr_assert_eq(st, 128 + SIGSEGV, "status %d", st);
  check_cut_entry(t, "---> piextQueueCreate(", "\tpi_queue_properties * properties : 0x40 [ ");
}

/* A write cut short (here by a file size limit the trace did not know of,
 * as by a full disk) is taken back: the file ends with a whole block. It
 * ended inside one, where the write stopped (at 100000 bytes). */
Test(trace, a_write_cut_short_leaves_no_cut_block)
{
  int st;
  char *t = run_trace_end("fsize", 2000, &st);
  cr_assert_eq(st, 0, "status %d", st);
  size_t len = strlen(t);
  cr_assert(len > 200 && len < 100000, "%zu bytes", len);
  /* The last query: its entry (6 lines), or its entry and exit (10). A
   * dropped buffer may hold an entry whose exit a later one holds. */
  const char *last = NULL;
  for (const char *p = strstr(t, "---> piDeviceGetInfo("); p;
       p = strstr(p + 1, "\n---> piDeviceGetInfo("))
    last = p;
  cr_assert(last, "%s", t);
  last += *last == '\n';
  /* The plugins' teardown blocks may follow it whole, where the room the
   * limit left after the write taken back holds them (block sizes vary
   * with the addresses printed: under ASan this failed now and then). */
  const char *td = strstr(last, "---> piTearDown(");
  char *query = strndup(last, td ? (size_t)(td - last) : strlen(last));
  int lines = tu_count(query, "\n");
  cr_assert(query[0] && query[strlen(query) - 1] == '\n' && (lines == 6 || lines == 10),
            "the last query's block is cut:\n%s", last);
  if (td) /* each teardown block whole: an entry (2 lines) or an exit (2) */
    cr_assert(tu_count(td, "\n") % 2 == 0 &&
                  (strcmp(t + len - 6, "NULL\n") == 0 || strcmp(t + len - 2, "\n\n") == 0),
              "the last block is cut:\n%s", td);
  free(query);
}

/* abort() after calls (a failed assert): every block written. LLVM's
 * handler, installed over the trace's as PoCL started, put the trace's
 * back and returned, and abort() raised SIGABRT again under the default
 * action: the trace's handler never ran, and the file kept none of the
 * buffered blocks (here: empty). The trace's handler now goes in front
 * again after the calls that may start an implementation. */
Test(trace, abort_after_calls_keeps_every_block)
{
  int st;
  char *base = run_trace_end("exit", 0, &st);
  char *t = run_trace_end("abort", 100, &st);
  cr_assert_eq(st, 128 + SIGABRT, "status %d", st);
  const char *units = "\tpi_device_info param_name : PI_DEVICE_INFO_MAX_COMPUTE_UNITS\n";
  cr_assert_eq(tu_count(t, units), tu_count(base, units) + 100, "%s", t);
  cr_assert_eq(lines_starting(t, "---> "), lines_starting(t, ") ---> "));
}

/* Threads that still make calls as the program returns from main (a pool
 * nobody joined): the runtime's shutdown freed the devices, the plugins
 * and the trace's buffers under them, and the program crashed on its way
 * out (15 runs of 15 traced to a file). Now nothing they may touch is
 * freed, and their calls after the plugins' teardown fail. */
Test(trace, threads_still_calling_as_the_program_exits_do_not_crash_it)
{
  for (int i = 0; i < 2; i++) {
    int st;
    char *t = run_trace_end("exitbusy", 4, &st);
    cr_assert_eq(st, 0, "status %d", st);
    cr_assert_gt(lines_starting(t, "---> piDeviceGetInfo("), 0);
  }
}

/* libpirt traced to a file, used and unloaded (dlclose), then a signal:
 * LLVM's handler inside PoCL, installed over the trace's, handed the
 * signal on to the trace's, unmapped with the library, and the program
 * died of SIGSEGV instead. A traced libpirt now stays loaded. */
Test(trace, a_signal_after_the_traced_runtime_is_unloaded_ends_the_program_as_it_would)
{
  char *path = tu_temp_path(".trace");
  char *file_kv = malloc(strlen(path) + 32);
  sprintf(file_kv, "SYCL_PI_TRACE_FILE=%s", path);
  const char *argv[] = {PITRACE_BIN_DIR "/dlopen_cycle", PITRACE_LIB_DIR "/libpirt.so", "2",
                        "term", NULL};
  const char *env[] = {"SYCL_PI_TRACE=2", file_kv,
                       "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd", NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 128 + SIGTERM, "status %d: %s", st, out);
  cr_assert(strstr(out, "cycle 1: 1 device(s)"), "%s", out);
  unlink(path);
}

/* Device times without recording, the runtime unloaded and loaded again
 * while a thread that used it lives (the shim stays loaded, its instances
 * the last runtime's): the second load found them taken, and its plugins'
 * device times went untraced ("wraps at most 4 plugins"). Each load binds
 * them anew. */
Test(trace, device_times_follow_a_runtime_loaded_again_while_a_thread_lives)
{
  const char *argv[] = {PITRACE_BIN_DIR "/dlopen_cycle", PITRACE_LIB_DIR "/libpirt.so", "3",
                        "across", NULL};
  const char *env[] = {"SYCL_PI_TRACE=1", "SYCL_PI_RECORD_PROFILE=1",
                       "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd", NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "status %d: %s", st, out);
  cr_assert(strstr(out, "3 cycles done"), "%s", out);
  cr_assert_null(strstr(out, "not wrapped"), "%s", out);
  int bound = 0;
  for (const char *p = out; (p = strstr(p, "libpi_opencl.so: device times traced by the shim"));
       p++)
    bound++;
  cr_assert_eq(bound, 3, "%s", out);
}

/* Device times without recording (SYCL_PI_TRACE with SYCL_PI_RECORD_PROFILE=1):
 * one line per launch, with its call's number and its kernel's name, once
 * the program's own synchronisation finds it complete; no session made. */
Test(trace, device_times_without_recording_name_each_launch)
{
  char *path = tu_temp_path(".trace"), *dir = tu_temp_path(".d");
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *argv[] = {PITRACE_BIN_DIR "/matmul", "2", NULL};
  char *file_kv = malloc(strlen(path) + 32);
  sprintf(file_kv, "SYCL_PI_TRACE_FILE=%s", path);
  const char *env[] = {"SYCL_PI_TRACE=2", "SYCL_PI_RECORD_PROFILE=1", file_kv, NULL};
  char *out, cwd[4096];
  cr_assert(getcwd(cwd, sizeof cwd));
  cr_assert_eq(chdir(dir), 0); /* a recording would make pitrace-PID.db here */
  int st = tu_run(argv, env, &out);
  cr_assert_eq(chdir(cwd), 0);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "matmul: result verified"), "%s", out);
  char *t = tu_read_file(path);
  cr_assert(t);
  /* The kernels, as the program created them. */
  char names[8][64];
  int nk = 0;
  for (const char *k = strstr(t, "\tconst char * kernel_name : \""); k && nk < 8;
       k = strstr(k + 1, "\tconst char * kernel_name : \"")) {
    cr_assert_eq(sscanf(k, "\tconst char * kernel_name : \"%63[^\"]", names[nk]), 1);
    nk++;
  }
  cr_assert_eq(nk, 4, "%d kernels created", nk);
  /* The entry lines, numbered as the shim numbers calls. */
  char *entries[4096];
  int ne = 0;
  for (const char *p = t; p && *p && ne < 4096; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, "---> ", 5) == 0 && strncmp(p, "---> device time: ", 18) != 0)
      entries[ne++] = strndup(p, (size_t)(strchr(p, '\n') - p));
  int launches = 0, timed = 0, per_kernel[8] = {0};
  for (const char *p = t; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    launches += strncmp(p, "---> piEnqueueKernelLaunch(", 27) == 0;
    if (strncmp(p, "---> device time: piEnqueueKernelLaunch (call ", 46) != 0)
      continue;
    unsigned long long call;
    char kernel[64];
    double us;
    unsigned queue;
    cr_assert_eq(sscanf(p + 46, "%llu, kernel %63[^)]) %lf us on queue#%u", &call, kernel,
                        &us, &queue), 4, "%.200s", p);
    cr_assert(call >= 1 && call <= (unsigned long long)ne, "call %llu of %d", call, ne);
    cr_assert_str_eq(entries[call - 1], "---> piEnqueueKernelLaunch(", "call %llu is %s", call,
                     entries[call - 1]);
    cr_assert_gt(us, 0.0, "PoCL measured %s at %g us", kernel, us);
    cr_assert_eq(queue, 1);
    int k = 0;
    while (k < nk && strcmp(names[k], kernel) != 0)
      k++;
    cr_assert_lt(k, nk, "device time of an unknown kernel %s", kernel);
    per_kernel[k]++;
    timed++;
  }
  cr_assert_eq(launches, 8);
  cr_assert_eq(timed, launches);
  for (int k = 0; k < nk; k++)
    cr_assert_eq(per_kernel[k], 2, "%s timed %d times", names[k], per_kernel[k]);
  /* The transfers are timed too; and nothing was recorded. */
  cr_assert_geq(tu_count(t, "---> device time: piEnqueueMemBufferRead (call "), 8);
  char *ls = NULL;
  const char *lsargv[] = {"/bin/ls", "-A", dir, NULL};
  cr_assert_eq(tu_run(lsargv, NULL, &ls), 0);
  cr_assert_str_eq(ls, "", "files made: %s", ls);
  unlink(path);
}
