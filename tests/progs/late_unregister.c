/*
 * late_unregister: a program whose device images live in a library
 * (libunreg_late.so, tests/device/k_plain.cl) that does not depend on
 * libpirt. The linker order (libpirt first) makes the loader finalise that
 * library after the runtime: its images register before main, and
 * unregister after the runtime has shut down. Both must be harmless; the
 * library's destructor prints when it has unregistered.
 *
 * That destructor also calls back here, after the shutdown: a bundle then
 * gets no kernel, and the message says the runtime has shut down. So do a
 * queue, a buffer and a context used then (their device and plugin are
 * freed by then: they were read, a device name printed as garbage), and
 * their releases free them.
 */
#include <stdio.h>

#include "pirt.h"

int unreg_late_host(void);
void unreg_late_call_at_exit(void (*fn)(void));

static pirt_bundle *b;
static pirt_context *ctx;
static pirt_queue *q;
static pirt_buffer *buf;

static void say(const char *what, pi_result r)
{
  printf("after shutdown: %s: %s: %s\n", what, pirt_result_name(r), pirt_error_message());
  fflush(stdout);
}

static void after_shutdown(void)
{
  pirt_kernel *k;
  pi_result r = pirt_bundle_get_kernel(b, "k_plain", &k);
  printf("after shutdown: %s: %s\n", pirt_result_name(r), pirt_error_message());
  fflush(stdout);
  int v = 1;
  pirt_buffer *b2 = NULL;
  pirt_queue *q2 = NULL;
  say("finish", pirt_queue_finish(q));
  say("write", pirt_write(q, buf, true, 0, sizeof v, &v, 0, NULL, NULL));
  say("buffer", pirt_buffer_create(ctx, 0, 16, NULL, &b2));
  say("queue", pirt_queue_create(ctx, 0, &q2));
  say("release", pirt_buffer_release(buf));
  say("release", pirt_queue_release(q));
  say("release", pirt_context_release(ctx));
}

int main(void)
{
  pirt_device *dev;
  pirt_kernel *k;
  int out[4] = {0};
  size_t n = 4;
  if (unreg_late_host() != 0 || pirt_device_select(NULL, &dev) ||
      pirt_context_create(dev, &ctx) || pirt_queue_create(ctx, 0, &q) ||
      pirt_bundle_create(ctx, &b) || pirt_bundle_get_kernel(b, "k_plain", &k) ||
      pirt_buffer_create(ctx, 0, sizeof out, NULL, &buf) ||
      pirt_kernel_set_buffer(k, 0, buf) ||
      pirt_launch(q, k, 1, &n, NULL, 0, NULL, NULL) ||
      pirt_read(q, buf, true, 0, sizeof out, out, 0, NULL, NULL)) {
    printf("late_unregister: %s\n", pirt_error_message());
    return 2;
  }
  unreg_late_call_at_exit(after_shutdown);
  printf("late_unregister: kernel from the library's image wrote %d %d %d %d\n",
         out[0], out[1], out[2], out[3]);
  return out[3] == 6 ? 0 : 1;
}
