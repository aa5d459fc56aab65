int which_lib(void);
__kernel void k_which(__global int *o) { o[0] = which_lib(); }
