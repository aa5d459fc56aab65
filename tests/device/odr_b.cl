/* libodr_b.so's device image: a second definition of which_lib (ODR). */
int which_lib(void) { return 2; }
