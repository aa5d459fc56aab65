/*
 * bundle_threads: a bundle shared by two threads, as pirt.h allows: one
 * sets spec constants on it while the other gets the bundle's kernel and
 * launches it with a launch value. Run under ThreadSanitizer by
 * tests/tsan_check.sh ("bundle"); prints "bundle_threads: done" and ends
 * with 0 when every call succeeded.
 */
#include <pthread.h>
#include <stdio.h>

#include "pirt.h"

static pirt_bundle *bundle;

static void *setter(void *arg)
{
  (void)arg;
  for (int i = 0; i < 200; i++) {
    char id[32];
    snprintf(id, sizeof id, "id_of_another_kernel_%d", i);
    int v = i;
    if (pirt_bundle_set_spec_constant(bundle, id, &v, sizeof v) != PI_SUCCESS ||
        pirt_bundle_set_spec_constant(bundle, "id_int", &v, sizeof v) != PI_SUCCESS)
      return (void *)1;
  }
  return NULL;
}

int main(void)
{
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *b;
  if (pirt_device_select(NULL, &dev) || pirt_context_create(dev, &ctx) ||
      pirt_queue_create(ctx, 0, &q) || pirt_bundle_create(ctx, &bundle) ||
      pirt_buffer_create(ctx, 0, 6 * sizeof(float), NULL, &b)) {
    printf("bundle_threads: %s\n", pirt_error_message());
    return 2;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, setter, NULL) != 0)
    return 2;
  int bad = 0;
  for (int i = 0; i < 20 && !bad; i++) {
    pirt_kernel *k;
    pirt_spec_value sv = {"id_Nested", (float[2]){1, 2}, 2 * sizeof(float)};
    size_t one = 1;
    bad = pirt_bundle_get_kernel(bundle, "k_spec", &k) || pirt_kernel_set_buffer(k, 0, b) ||
          pirt_launch_spec(q, k, 1, &one, NULL, 1, &sv, 0, NULL, NULL) ||
          pirt_queue_finish(q) || pirt_kernel_release(k);
  }
  void *ret;
  pthread_join(t, &ret);
  if (bad || ret) {
    printf("bundle_threads: %s\n", pirt_error_message());
    return 2;
  }
  pirt_buffer_release(b);
  pirt_bundle_release(bundle);
  pirt_queue_release(q);
  pirt_context_release(ctx);
  printf("bundle_threads: done\n");
  return 0;
}
