int missing_fn(int x);
__kernel void k_missing(__global int *o) { o[0] = missing_fn(1); }
