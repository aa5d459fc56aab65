/* liblate.so's device image, loaded by the test with dlopen: a third
 * which_lib, and late_only, which nothing loaded at start-up exports. */
int which_lib(void) { return 3; }
int late_only(void) { return 4; }
