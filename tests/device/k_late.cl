int late_only(void);
__kernel void k_late(__global int *o) { o[0] = late_only(); }
