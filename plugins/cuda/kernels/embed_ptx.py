#!/usr/bin/env python3
"""Compiles the CUDA kernels of the CUDA plugin's test and example to PTX and
embeds the text, as C string literals, between the markers

    /* BEGIN PTX <name> ... */   ...   /* END PTX <name> */

of tests/test_cuda.c and examples/vadd_ptx.c. Run it after editing a .cu file:

    plugins/cuda/kernels/embed_ptx.py [--nvcc /usr/local/cuda/bin/nvcc]

The PTX is for sm_90 (Hopper: the H100 the plugin was verified on) with its
.version lowered to 7.8, the first PTX ISA that knows sm_90, so that drivers
from CUDA 11.8 on can JIT it; ptxas checks the lowered text."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
KERNELS = os.path.join(ROOT, "plugins", "cuda", "kernels")

# name, source (relative to the root), relocatable device code, target file
JOBS = [
    ("test_kernels", "plugins/cuda/kernels/test_kernels.cu", False,
     "tests/test_cuda.c"),
    ("link_main", "plugins/cuda/kernels/link_main.cu", True,
     "tests/test_cuda.c"),
    ("link_lib", "plugins/cuda/kernels/link_lib.cu", True,
     "tests/test_cuda.c"),
    ("vadd_ptx", "examples/vadd_ptx.cu", False, "examples/vadd_ptx.c"),
]
ARCH = "sm_90"
PTX_VERSION = "7.8"


def compile_ptx(nvcc, src, rdc, tmp):
    out = os.path.join(tmp, os.path.basename(src) + ".ptx")
    cmd = [nvcc, "-ptx", "-arch=" + ARCH, "-o", out, os.path.join(ROOT, src)]
    if rdc:
        cmd.insert(1, "-rdc=true")
    subprocess.run(cmd, check=True)
    with open(out) as f:
        ptx = f.read()
    ptx, n = re.subn(r"^\.version \d+\.\d+$", ".version " + PTX_VERSION, ptx,
                     flags=re.M)
    if n != 1:
        sys.exit("embed_ptx: no .version line in the PTX of " + src)
    with open(out, "w") as f:
        f.write(ptx)
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    check = [ptxas, "-arch=" + ARCH, "-o", os.devnull, out]
    if rdc:
        check.insert(1, "-c")
    subprocess.run(check, check=True)
    return ptx


def c_literal(ptx):
    lines = []
    for line in ptx.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
        lines.append('    "%s\\n"' % line)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, src, rdc, target in JOBS:
            ptx = compile_ptx(args.nvcc, src, rdc, tmp)
            path = os.path.join(ROOT, target)
            with open(path) as f:
                text = f.read()
            begin = re.compile(r"/\* BEGIN PTX %s\b[^*]*\*/\n" % name)
            m = begin.search(text)
            end = "/* END PTX %s */" % name
            if not m or end not in text[m.end():]:
                sys.exit("embed_ptx: %s has no BEGIN/END PTX %s markers"
                         % (target, name))
            stop = text.index(end, m.end())
            body = ("static const char %s_ptx[] =\n%s;\n"
                    % (name, c_literal(ptx)))
            text = text[:m.end()] + body + text[stop:]
            with open(path, "w") as f:
                f.write(text)
            print("embed_ptx: %s -> %s (%d bytes of PTX)" % (src, target,
                                                            len(ptx)))


if __name__ == "__main__":
    main()
