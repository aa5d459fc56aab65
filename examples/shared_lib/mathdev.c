/*
 * libmathdev.so: a shared library that carries device code. Its device
 * image (mathdev.cl, embedded by pitrace_add_device_code) exports poly2,
 * and registers itself when the library loads, like any DPC++ shared
 * library with SYCL_EXTERNAL functions.
 */
#include "mathdev.h"

float mathdev_poly2_host(float x, float a, float b) { return a * x * x + b; }
