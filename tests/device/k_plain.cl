/* "__"-prefixed declarations (builtins, __spirv_ ops) are never imports, so
 * this image builds directly, without a link step. */
int __reserved_decl(int x);
int __spirv_FakeOp(int x);
__kernel void k_plain(__global int *o) { o[get_global_id(0)] = (int)get_global_id(0) * 2; }
