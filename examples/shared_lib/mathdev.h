/* libmathdev.so's host API: the host twin of its device function poly2. */
#ifndef MATHDEV_H
#define MATHDEV_H
float mathdev_poly2_host(float x, float a, float b);
#endif
