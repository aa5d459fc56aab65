/*
 * global.c: the runtime's global state and its lifetime (seed 002).
 *
 * Nothing is created before first use: the first API call initialises the
 * state under a pthread_once. Shutdown runs from a destructor at priority
 * 110, so the application's destructors (default priority, and every other
 * module's fini) still find the runtime working; it tears down and unloads
 * every plugin, then frees everything, so dlopen/dlclose of the runtime
 * library in a loop leaks nothing. After shutdown, calls fail with
 * PI_ERROR_UNINITIALIZED instead of re-initialising during exit.
 *
 * Unless other threads that used the runtime are still alive: a program
 * whose threads still make calls as it exits (a pool nobody joined) had
 * its devices, plugins and trace buffers freed under them, and crashed on
 * its way out every time when traced to a file or recorded (a device read
 * after its free; 15 runs of 15). Then the recording's session ends and
 * the trace is written, but the plugins are not torn down (a call another
 * thread is making may be inside one: CUDA's teardown frees its devices)
 * and nothing those threads may still touch is freed or unloaded: the
 * process is ending, or its library is being closed under threads that
 * still use it. Threads are counted at their first call and uncounted as
 * they end; a thread counts itself before it looks whether the runtime
 * is closing, and the shutdown closes it before it counts them, so that
 * one of the two sees the other.
 *
 * Also here: the per-thread error message of the application API.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pirt_internal.h"

static pirt_global *global;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static atomic_bool shut_down;

static atomic_uint live_users; /* threads that used the runtime, alive */
static pthread_key_t user_key;
static bool user_key_made;
__thread bool pirt_user_counted;
atomic_bool pirt_plugins_closed;
static __thread bool shutting_down_here; /* the shutdown's own calls pass */

/* A thread that used the runtime ends: its trace buffer written first
 * (the trace's own key, made after this one, would run after the thread
 * stopped counting: a shutdown meanwhile freed the buffer under it). */
static void user_thread_ends(void *p)
{
  (void)p;
  pirt_trace_thread_ends();
  pirt_user_counted = false; /* a later destructor's call counts it again */
  atomic_fetch_sub(&live_users, 1);
}

__attribute__((noinline, cold)) static void count_user(void)
{
  pirt_user_counted = true;
  if (user_key_made && pthread_setspecific(user_key, &pirt_user_counted) == 0)
    atomic_fetch_add(&live_users, 1);
}

/* Whether a thread other than the caller used the runtime and is alive. */
static bool other_users_alive(void)
{
  return atomic_load(&live_users) > (pirt_user_counted ? 1u : 0u);
}

static void global_create(void);

/* The gate's message is kept by the pirt_fail_call that follows (global.c,
 * below): that one would read the plugin, freed and unloaded by then. */
static void keep_message(void);

/* Counts the calling thread; whether the runtime is closed to it. */
static bool gate_closed_here(void)
{
  if (!pirt_user_counted) {
    pthread_once(&global_once, global_create); /* the key exists */
    count_user();
  }
  return atomic_load(&pirt_plugins_closed) && !shutting_down_here;
}

pi_result pirt_call_gate(pi_api_id id)
{
  if (!gate_closed_here())
    return PI_SUCCESS;
  pirt_fail(PI_ERROR_UNINITIALIZED, "%s: the pitrace runtime has shut down (the program is "
            "exiting); its plugins take no more calls", pi_api_table[id].name);
  keep_message();
  return PI_ERROR_UNINITIALIZED;
}

pi_result pirt_api_gate(const char *fn, const char *object)
{
  if (!gate_closed_here())
    return PI_SUCCESS;
  pirt_fail(PI_ERROR_UNINITIALIZED, "%s: the pitrace runtime has shut down (the program is "
            "exiting); the %s can no longer be used, only released", fn, object);
  keep_message();
  return PI_ERROR_UNINITIALIZED;
}

/* The runtime's locks across fork: a child forked while another thread
 * held one (the global lock: any call that needs a device takes it,
 * briefly; the program manager's: a bundle's kernel or spec constant) had
 * it locked for good, with no thread to let it go: its first such call
 * hung, and so did its exit (the shutdown takes them), 7 and 9 children of
 * 10 with a thread busy meanwhile. The forking thread takes them first,
 * unless it holds one already (a plugin forking during discovery).
 *
 * The handlers are registered once the plugins are loaded, not before:
 * glibc runs prepare handlers newest first, and the recording shim (a
 * plugin) registers its own when it is loaded. Ours must run before it:
 * a thread holding a runtime lock makes PI calls into the shim, which may
 * need the shim's locks or its writer, both of which the shim's prepare
 * handler holds still (the runtime's locks nest outside the shim's; in the
 * other order the parent deadlocks). Registered before the plugins, they
 * would run after the shim's in every fork, the first discovery's too
 * (which calls into the shim under the global lock). A fork during the
 * first discovery therefore leaves the global lock as it is (the child
 * may hang, as before this). */
static __thread bool lock_held_here;
/* The forking thread's (glibc runs two threads' handlers side by side;
 * the global lock then makes the second wait for the first's fork). */
static __thread bool lock_held_for_fork, pm_held_for_fork;
/* Forks between their prepare handler and their parent or child handler.
 * glibc (2.36) lets go of its own atfork lock while a handler runs, so the
 * process's exit or a dlclose of this library can unregister the handlers
 * of a fork already prepared: glibc 2.36 then aborts in the fork (its
 * handler list shrank under it: 20 runs of 20 of fork_threads' "exit"), or
 * the fork's parent handler never runs and the locks it took stay taken
 * (the exit hung in pirt_shutdown). The gate closes first
 * (close_fork_gate, an exit handler of this library, which glibc runs
 * before it unregisters the library's fork handlers), waiting for the forks
 * under way; a fork prepared after that, or once the runtime shuts down,
 * takes no lock. The shutdown frees the global state once none is under
 * way either. */
static atomic_uint forking;
static atomic_bool fork_gate_closed;

void pirt_global_lock(pirt_global *g)
{
  pthread_mutex_lock(&g->lock);
  lock_held_here = true;
}

void pirt_global_unlock(pirt_global *g)
{
  lock_held_here = false;
  pthread_mutex_unlock(&g->lock);
}

static __thread pirt_global *fork_global;

static void close_fork_gate(void)
{
  atomic_store(&fork_gate_closed, true);
  while (atomic_load(&forking))
    sched_yield();
}

/* The global lock first, then the program manager's (program.c), in the
 * order the shutdown takes them. */
static void fork_prepare(void)
{
  atomic_fetch_add(&forking, 1);
  if (atomic_load(&fork_gate_closed) || atomic_load(&pirt_plugins_closed)) {
    atomic_fetch_sub(&forking, 1);
    return;
  }
  pirt_global *g = global;
  if (g && !lock_held_here) {
    pthread_mutex_lock(&g->lock);
    lock_held_for_fork = true;
    fork_global = g;
  }
  pm_fork_prepare();
  pm_held_for_fork = true;
}

static void fork_parent(void)
{
  if (!pm_held_for_fork)
    return; /* its prepare took nothing */
  pm_held_for_fork = false;
  pm_fork_parent();
  if (lock_held_for_fork) {
    lock_held_for_fork = false;
    pthread_mutex_unlock(&fork_global->lock);
  }
  atomic_fetch_sub(&forking, 1);
}

static void fork_child(void)
{
  if (pm_held_for_fork) {
    pm_held_for_fork = false;
    pm_fork_child();
  }
  if (lock_held_for_fork) {
    lock_held_for_fork = false;
    pthread_mutex_unlock(&fork_global->lock);
  }
  atomic_store(&forking, 0); /* the forking thread is the child's only one */
}

static void register_fork_handlers(void)
{
  atexit(close_fork_gate); /* this library's: at exit, and at its dlclose */
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void pirt_global_load(pirt_global *g)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pirt_global_lock(g);
  pirt_plugins_load();
  pirt_devices_discover();
  pirt_global_unlock(g);
  pthread_once(&once, register_fork_handlers); /* not under the lock: see above */
}

/* A forked child has the forking thread alone. */
static void users_fork_child(void)
{
  atomic_store(&live_users, pirt_user_counted ? 1u : 0u);
}

static void global_create(void)
{
  user_key_made = pthread_key_create(&user_key, user_thread_ends) == 0;
  pthread_atfork(NULL, NULL, users_fork_child);
  pirt_trace_init();
  pirt_global *g = calloc(1, sizeof *g);
  if (!g)
    return;
  pthread_mutex_init(&g->lock, NULL);
  global = g;
  pirt_trace(PIRT_TRACE_DEBUG, "runtime state created (PI %s)",
             _PI_H_VERSION_STRING);
}

pirt_global *pirt_global_get(void)
{
  if (PIRT_UNLIKELY(atomic_load_explicit(&shut_down, memory_order_acquire)))
    return NULL;
  pthread_once(&global_once, global_create);
  if (PIRT_UNLIKELY(!pirt_user_counted))
    count_user();
  if (PIRT_UNLIKELY(atomic_load(&pirt_plugins_closed)) && !shutting_down_here)
    return NULL; /* shutting down on another thread */
  return global;
}

__attribute__((destructor(110))) static void pirt_shutdown(void)
{
  if (!global) /* never used */
    return;
  pirt_global *g = global;
  /* From here on only this thread's calls enter the plugins: other
   * threads' fail at the gate. Closed first, then counted (above). */
  shutting_down_here = true;
  atomic_store(&pirt_plugins_closed, true);
  bool others = other_users_alive();
  pirt_global_lock(g);
  if (others) {
    pirt_trace(PIRT_TRACE_BASIC, "Runtime shutting down: other threads still use the "
               "runtime: %zu plugin(s) left as they are, nothing freed", g->nplugins);
    pirt_plugins_finish_recording();
  } else {
    pirt_trace(PIRT_TRACE_BASIC, "Runtime shutting down: tearing down %zu plugin(s)",
               g->nplugins);
    pm_shutdown();
    pirt_devices_free();
    pirt_plugins_unload();
  }
  atomic_store_explicit(&shut_down, true, memory_order_release);
  pirt_global_unlock(g);
  /* The key goes in any case: a thread that ends after a dlclose would
   * otherwise call its destructor in the unmapped library. */
  if (user_key_made)
    pthread_key_delete(user_key);
  user_key_made = false;
  if (!others) {
    while (atomic_load(&forking)) /* a fork that took the lock before it closed */
      sched_yield();
    pthread_mutex_destroy(&g->lock);
    free(g);
    global = NULL;
  }
  pirt_trace_fini(!others);
  shutting_down_here = false; /* its later calls fail as any thread's */
}

/* ---- Errors ---------------------------------------------------------------- */

static __thread char last_error[1024];
/* The message says it best (an unsupported entry, the closed gate): the
 * next pirt_fail_call keeps it. */
static __thread bool last_is_kept;

static void keep_message(void) { last_is_kept = true; }

pi_result pirt_fail_unsupported(pi_result r, const char *msg)
{
  pirt_fail(r, "%s", msg);
  last_is_kept = true;
  return r;
}

pi_result pirt_fail(pi_result r, const char *fmt, ...)
{
  last_is_kept = false;
  /* Formatted apart first: callers may pass the previous message (from
   * pirt_error_message()) as an argument. */
  char text[sizeof last_error];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  memcpy(last_error, text, sizeof last_error);
  pirt_trace(PIRT_TRACE_DEBUG, "error %s: %s", pi_result_name(r), last_error);
  return r;
}

pi_result pirt_fail_call(const struct pirt_plugin *pl, const char *what,
                         pi_result r)
{
  if (last_is_kept) { /* the runtime's own message says it best */
    last_is_kept = false;
    return r;
  }
  char *msg = NULL;
  if (pl && pl->table.piPluginGetLastError) {
    pl->table.piPluginGetLastError(&msg);
    if (msg && *msg)
      return pirt_fail(r, "%s failed with %s (plugin %s says: %s)", what,
                       pi_result_name(r), pl->name, msg);
  }
  return pirt_fail(r, "%s failed with %s", what, pi_result_name(r));
}

const char *pirt_error_message(void) { return last_error; }

const char *pirt_result_name(pi_result r) { return pi_result_name(r); }

char *pirt_strdup(const char *s) { return s ? strdup(s) : NULL; }

pi_result pirt_init(void)
{
  pirt_global *g = pirt_global_get();
  if (!g)
    return pirt_fail(PI_ERROR_UNINITIALIZED, "the pitrace runtime has shut "
                     "down; no PI call can be made from this point of exit");
  pirt_global_load(g);
  if (g->nplugins == 0)
    return pirt_fail(PI_ERROR_DEVICE_NOT_FOUND, "%s", g->problem);
  return PI_SUCCESS;
}
