/* Host side of the test libraries: one function each, so that the linker
 * keeps them as dependencies of the test program. */
int ODR_HOST_FN(void) { return 0; }
