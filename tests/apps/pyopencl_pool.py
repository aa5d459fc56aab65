"""A pyopencl program that hands work to a multiprocessing pool of forked
workers (the fork start method, Python's default on Linux before 3.14)
after it chose its device through OpenCL, so that its recorder runs when
it forks. Each task, in a worker, makes a context of its own, moves data
through the device (host to buffer, buffer to buffer, buffer to host) and
checks it against what it sent; then the parent runs a kernel itself.
Prints "pool verified N tasks" when every result is right.

The workers launch no kernel: neither PoCL nor rusticl (llvmpipe) can run
one in a child forked after the parent initialized them, recorded or not
(the child waits for worker threads of theirs that a fork does not copy);
on rusticl, copies work there, on PoCL nothing does.

A task moves 256 KiB: multiprocessing's workers end with os._exit, so
their sessions are salvaged, payloads over 64 KiB from the payload file
beside the ring file (payload.c)."""
import multiprocessing
import sys

import numpy as np
import pyopencl as cl

SRC = """
__kernel void scale(__global const float *a, __global float *b, float k)
{ size_t i = get_global_id(0); b[i] = a[i] * k + 1.0f; }
"""


def task(k, n=65536):
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    q = cl.CommandQueue(ctx)
    a = (np.arange(n, dtype=np.float32) * k).astype(np.float32)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
    cl.enqueue_copy(q, db, da)
    b = np.empty_like(a)
    cl.enqueue_copy(q, b, db)
    q.finish()
    return bool(np.array_equal(a, b))


if __name__ == "__main__":
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    ctx = cl.create_some_context(interactive=False)
    print("device:", ctx.devices[0].name)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map(task, range(1, tasks + 1))
    if not all(results):
        sys.exit("a worker's copies came back wrong: %s" % results)
    q = cl.CommandQueue(ctx)
    a = np.arange(4096, dtype=np.float32)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    cl.Program(ctx, SRC).build().scale(q, a.shape, None, da, db, np.float32(0.5))
    b = np.empty_like(a)
    cl.enqueue_copy(q, b, db)
    if not np.allclose(b, a * 0.5 + 1.0):
        sys.exit("the parent's kernel gave a wrong result")
    print("pool verified %d tasks" % tasks)
