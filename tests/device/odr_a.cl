/* libodr_a.so's device image: exports which_lib, as libodr_b.so's does. */
int which_lib(void) { return 1; }
