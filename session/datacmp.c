/*
 * datacmp.c: two runs' bytes of one payload compared element by element
 * (session.h: pt_data_compare), for replay's check of read-backs against
 * the recording and diff's of two sessions' read-backs. Bitwise; or, with
 * a tolerance, as 32-bit or 64-bit floats: last bits of float results
 * differ between devices (PoCL and rusticl, a CPU and a GPU).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "session.h"

/* Whether a NaN is one that arithmetic makes (its payload, the bits below
 * the quiet bit, all zeros or all ones: 0x7fc00000 and 0xffc00000 of x86
 * and most GPUs, 0x7fffffff of NVIDIA's): two devices may make different
 * ones for the same result. Other NaN patterns are other data read as
 * floats (the int32 -2 is 0xfffffffe). */
static bool canonical_nan(uint64_t bits, bool f64)
{
  uint64_t payload = f64 ? bits & 0x7ffffffffffffull : bits & 0x3fffffu;
  return payload == 0 || payload == (f64 ? 0x7ffffffffffffull : 0x3fffffu);
}

static bool elem_equal(const unsigned char *a, const unsigned char *b, size_t w,
                       double tolerance)
{
  if (memcmp(a, b, w) == 0)
    return true;
  if (tolerance < 0 || (w != 4 && w != 8))
    return false;
  double x, y, tiny, huge;
  uint64_t xb = 0, yb = 0;
  if (w == 4) {
    float fx, fy;
    memcpy(&fx, a, 4);
    memcpy(&fy, b, 4);
    x = fx;
    y = fy;
    memcpy(&xb, a, 4);
    memcpy(&yb, b, 4);
    tiny = 0x1p-64;
    huge = 0x1p64;
  } else {
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    memcpy(&xb, a, 8);
    memcpy(&yb, b, 8);
    tiny = 0x1p-256;
    huge = 0x1p256;
  }
  if (isnan(x) && isnan(y))
    return canonical_nan(xb, w == 8) && canonical_nan(yb, w == 8);
  /* An infinity equals only itself (bitwise, above): the scale would be
   * infinite and any value within "tolerance" of it. */
  if (isinf(x) || isinf(y))
    return false;
  /* Integers and packed bytes read as floats are mostly tiny (every int32
   * from 1 to 2^29: 512 and 1024 are 7e-43 and 1.4e-42, within any
   * absolute tolerance of each other) or huge (RGBA bytes with an opaque
   * alpha): a value outside [tiny, huge] is most likely no float, and
   * compared bitwise (above), as is a subnormal flushed to zero. */
  double ax = fabs(x), ay = fabs(y);
  if ((ax != 0 && (ax < tiny || ax > huge)) || (ay != 0 && (ay < tiny || ay > huge)))
    return false;
  double scale = fmax(1.0, fmax(ax, ay));
  return fabs(x - y) <= tolerance * scale;
}

bool pt_data_compare(const unsigned char *a, const unsigned char *b, size_t n, double tolerance,
                     bool f64, pt_data_diff *d)
{
  size_t w = tolerance >= 0 ? (f64 ? 8 : 4) : (n % 4 == 0 ? 4 : 1);
  *d = (pt_data_diff){.width = w, .first = SIZE_MAX, .elems = (n + w - 1) / w};
  if (memcmp(a, b, n) == 0)
    return true;
  for (size_t k = 0; k < d->elems; k++) {
    size_t ew = k * w + w <= n ? w : n - k * w;
    if (!elem_equal(a + k * w, b + k * w, ew, tolerance) && d->count++ == 0)
      d->first = k;
  }
  return d->count == 0;
}

void pt_data_elem_text(char *out, size_t n, const unsigned char *p, size_t w)
{
  uint64_t bits = 0;
  memcpy(&bits, p, w < 8 ? w : 8);
  int len = snprintf(out, n, "0x%0*llx", (int)(2 * w), (unsigned long long)bits);
  if (len < 0 || (size_t)len >= n)
    return;
  if (w == 4) {
    float f;
    memcpy(&f, p, 4);
    snprintf(out + len, n - (size_t)len, " (%.9g)", (double)f);
  } else if (w == 8) {
    double x;
    memcpy(&x, p, 8);
    snprintf(out + len, n - (size_t)len, " (%.17g)", x);
  }
}
