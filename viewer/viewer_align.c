/*
 * viewer_align.c: aligning two call sequences on their API (Myers' O(ND)
 * difference algorithm, in linear space: the middle snake of each box,
 * then the boxes before and after it). Used by the diff.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "viewer_common.h"

/* Past this many edits in one box, its calls are left unmatched rather
 * than spending quadratic time on two sessions that have little in common. */
#define MAX_D 20000

typedef struct box {
  int64_t left, top, right, bottom;
} box;

typedef struct aligner {
  const uint32_t *a, *b;
  int32_t *match_a; /* a index -> b index, or -1 */
  int64_t *vf, *vb; /* indexed by k + off */
  int64_t off;
} aligner;

typedef struct snake {
  int64_t x0, y0, x1, y1;
} snake;

static bool forward(aligner *al, const box *bx, int64_t d, snake *s)
{
  int64_t w = bx->right - bx->left, h = bx->bottom - bx->top, delta = w - h;
  bool odd = (w + h) & 1;
  int64_t *vf = al->vf + al->off, *vb = al->vb + al->off;
  for (int64_t k = d; k >= -d; k -= 2) {
    int64_t c = k - delta, px, x;
    if (k == -d || (k != d && vf[k - 1] < vf[k + 1]))
      px = x = vf[k + 1];
    else
      x = (px = vf[k - 1]) + 1;
    int64_t y = bx->top + (x - bx->left) - k;
    int64_t py = (d == 0 || x != px) ? y : y - 1;
    while (x < bx->right && y < bx->bottom && al->a[x] == al->b[y])
      x++, y++;
    vf[k] = x;
    if (odd && c >= -(d - 1) && c <= d - 1 && y >= vb[c]) {
      *s = (snake){px, py, x, y};
      return true;
    }
  }
  return false;
}

static bool backward(aligner *al, const box *bx, int64_t d, snake *s)
{
  int64_t w = bx->right - bx->left, h = bx->bottom - bx->top, delta = w - h;
  bool odd = (w + h) & 1;
  int64_t *vf = al->vf + al->off, *vb = al->vb + al->off;
  for (int64_t c = d; c >= -d; c -= 2) {
    int64_t k = c + delta, py, y;
    if (c == -d || (c != d && vb[c - 1] > vb[c + 1]))
      py = y = vb[c + 1];
    else
      y = (py = vb[c - 1]) - 1;
    int64_t x = bx->left + (y - bx->top) + k;
    int64_t px = (d == 0 || y != py) ? x : x + 1;
    while (x > bx->left && y > bx->top && al->a[x - 1] == al->b[y - 1])
      x--, y--;
    vb[c] = y;
    if (!odd && k >= -d && k <= d && x <= vf[k]) {
      *s = (snake){x, y, px, py};
      return true;
    }
  }
  return false;
}

/* The middle snake of a box; false when the box is empty or too different. */
static bool midpoint(aligner *al, const box *bx, snake *s)
{
  int64_t size = (bx->right - bx->left) + (bx->bottom - bx->top);
  if (size == 0)
    return false;
  int64_t max = (size + 1) / 2;
  al->vf[al->off + 1] = bx->left;
  al->vb[al->off + 1] = bx->bottom;
  for (int64_t d = 0; d <= max && d <= MAX_D; d++)
    if (forward(al, bx, d, s) || backward(al, bx, d, s))
      return true;
  return false;
}

/* Matches the equal elements along a diagonal from (x, y) up to (x1, y1). */
static void diagonal(aligner *al, int64_t *x, int64_t *y, int64_t x1, int64_t y1)
{
  while (*x < x1 && *y < y1 && al->a[*x] == al->b[*y]) {
    al->match_a[*x] = (int32_t)*y;
    (*x)++, (*y)++;
  }
}

/* A snake: diagonal, at most one step right or down, diagonal. */
static void walk(aligner *al, const snake *s)
{
  int64_t x = s->x0, y = s->y0;
  diagonal(al, &x, &y, s->x1, s->y1);
  if (s->x1 - x < s->y1 - y)
    y++;
  else if (s->x1 - x > s->y1 - y)
    x++;
  diagonal(al, &x, &y, s->x1, s->y1);
}

static void find_path(aligner *al, box bx)
{
  /* Common prefix and suffix first: most of two similar sessions. */
  while (bx.left < bx.right && bx.top < bx.bottom && al->a[bx.left] == al->b[bx.top])
    al->match_a[bx.left++] = (int32_t)bx.top++;
  while (bx.left < bx.right && bx.top < bx.bottom &&
         al->a[bx.right - 1] == al->b[bx.bottom - 1])
    al->match_a[--bx.right] = (int32_t)--bx.bottom;
  snake s;
  if (!midpoint(al, &bx, &s))
    return;
  walk(al, &s);
  find_path(al, (box){bx.left, bx.top, s.x0, s.y0});
  find_path(al, (box){s.x1, s.y1, bx.right, bx.bottom});
}

bool vw_align(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int32_t *match_a)
{
  aligner al = {a, b, match_a, NULL, NULL, 0};
  for (size_t i = 0; i < na; i++)
    match_a[i] = -1;
  int64_t max = (int64_t)(na + nb + 1) / 2 + 2;
  if (max > MAX_D + 2)
    max = MAX_D + 2;
  al.off = max + 1;
  al.vf = calloc((size_t)(2 * max + 3), sizeof *al.vf);
  al.vb = calloc((size_t)(2 * max + 3), sizeof *al.vb);
  if (!al.vf || !al.vb) {
    free(al.vf);
    free(al.vb);
    return false;
  }
  find_path(&al, (box){0, 0, (int64_t)na, (int64_t)nb});
  free(al.vf);
  free(al.vb);
  return true;
}
