#!/usr/bin/python3
"""pyopencl_check.py: a small pyopencl program of ours, run through pitrace
by the real-application tests: pyopencl.array arithmetic, an elementwise
kernel, a reduction, a scan, and images (a kernel that reads one and
writes another; a 3D image filled and copied into a buffer), each verified
against numpy. It uses the
first device of the first platform (the front end's, under `pitrace run`),
or PYOPENCL_CTX when set. Exit 0 when every result matches, 1 otherwise.

  pyopencl_check.py [N]        (default N = 100000)
"""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import InclusiveScanKernel


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    platform = cl.get_platforms()[0]
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    print("device: %s (%s)" % (device.name, platform.name))

    rng = np.random.default_rng(7)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    ad = cla.to_device(queue, a)
    bd = cla.to_device(queue, b)
    failures = []

    def check(what, got, want, rtol=1e-5, atol=1e-6):
        ok = np.allclose(got, want, rtol=rtol, atol=atol)
        print("%-12s %s" % (what, "ok" if ok else "WRONG"))
        if not ok:
            failures.append(what)

    check("array", (2 * ad + bd * ad).get(), 2 * a + b * a)

    lin = ElementwiseKernel(ctx, "float k, __global const float *x, "
                            "__global const float *y, __global float *z",
                            "z[i] = k * x[i] + y[i]", "lin")
    zd = cla.empty_like(ad)
    lin(np.float32(3), ad, bd, zd)
    check("elementwise", zd.get(), 3 * a + b)

    dot = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                          map_expr="x[i]*y[i]",
                          arguments="__global const float *x, __global const float *y")
    got = dot(ad, bd).get()
    check("reduction", got, np.dot(a.astype(np.float64), b.astype(np.float64)),
          rtol=1e-3)

    ints = rng.integers(0, 100, n).astype(np.int32)
    scan = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    sd = cla.to_device(queue, ints)
    scan(sd)
    check("scan", sd.get(), np.cumsum(ints, dtype=np.int32), rtol=0, atol=0)

    if device.image_support:
        h, w = 37, 53
        px = (np.arange(h * w * 4, dtype=np.float32) % 97).reshape(h, w, 4)
        rgba = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
        src = cl.Image(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, rgba,
                       shape=(w, h), hostbuf=px)
        dst = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, rgba, shape=(w, h))
        prg = cl.Program(ctx, """
__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                         CLK_FILTER_NEAREST;
__kernel void mirror(__read_only image2d_t a, __write_only image2d_t b) {
  int x = get_global_id(0), y = get_global_id(1);
  write_imagef(b, (int2)(x, y), read_imagef(a, s, (int2)(get_image_width(a) - 1 - x, y)) * 2);
}""").build()
        prg.mirror(queue, (w, h), None, src, dst)
        got = np.empty_like(px)
        cl.enqueue_copy(queue, got, dst, origin=(0, 0), region=(w, h))
        check("image", got, px[:, ::-1, :] * 2, rtol=0, atol=0)
        u8 = cl.ImageFormat(cl.channel_order.R, cl.channel_type.UNSIGNED_INT8)
        vol = cl.Image(ctx, cl.mem_flags.READ_WRITE, u8, shape=(8, 4, 3))
        cl.enqueue_fill_image(queue, vol, np.array([7, 0, 0, 0], np.uint32),
                              origin=(0, 0, 0), region=(8, 4, 3))
        flat = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8 * 4 * 3)
        cl.enqueue_copy(queue, flat, vol, offset=0, origin=(0, 0, 0), region=(8, 4, 3))
        back = np.empty(8 * 4 * 3, np.uint8)
        cl.enqueue_copy(queue, back, flat)
        check("image3d", back, np.full(8 * 4 * 3, 7, np.uint8), rtol=0, atol=0)

    queue.finish()
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    print("all verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
