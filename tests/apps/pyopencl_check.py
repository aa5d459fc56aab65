#!/usr/bin/python3
"""pyopencl_check.py: a small pyopencl program of ours, run through pitrace
by the real-application tests: pyopencl.array arithmetic, an elementwise
kernel, a reduction and a scan, each verified against numpy. It uses the
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

    queue.finish()
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    print("all verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
