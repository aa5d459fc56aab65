#!/usr/bin/python3
"""clinfo_compare.py: checks what `clinfo --raw` prints through pitrace's
OpenCL front end against what it prints for the same device directly.

  clinfo_compare.py PI_API CL_H DIRECT.txt PITRACE.txt

Every platform and device property that PI can query (its OpenCL value is
an entry of pi.api's pi_platform_info or pi_device_info table) must print
the same, device by device, except:
  - extension lists: the front end hides the extensions whose functions or
    queries it does not route, so its list must be a subset of the direct
    one (and must keep cl_khr_icd);
  - CL_DEVICE_EXECUTION_CAPABILITIES: the front end never claims
    CL_EXEC_NATIVE_KERNEL (PI cannot run native kernels), so that bit may be
    missing through pitrace and nothing else may differ;
  - CL_DEVICE_BUILT_IN_KERNELS: PI cannot create built-in kernels, so the
    front end offers none (an empty list);
  - handle-valued properties (CL_DEVICE_PLATFORM, CL_DEVICE_PARENT_DEVICE),
    which print addresses.
And the OpenCL 3.0 properties the front end derives from what PI answers
(DERIVED: the OpenCL C versions, the numeric version, the atomic memory
capabilities, the smallest data type alignment) must print the same, and
its OpenCL C features must be among the device's (it leaves out those it
cannot tell, never claims one more).
Other properties PI cannot query are listed as information, not compared. Exit 0
when everything compared is equal, 1 otherwise (each difference named).
"""
import re
import sys

LINE = re.compile(r"^\[([^/\]]+)/([^\]]+)\]\s+(CL_\w+)\s*(.*)$")
SKIP = {"CL_DEVICE_PLATFORM", "CL_DEVICE_PARENT_DEVICE"}
DERIVED = {"CL_DEVICE_OPENCL_C_ALL_VERSIONS", "CL_DEVICE_NUMERIC_VERSION",
           "CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES", "CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE"}
FEATURES = "CL_DEVICE_OPENCL_C_FEATURES"
LISTS = {"CL_PLATFORM_EXTENSIONS", "CL_DEVICE_EXTENSIONS",
         "CL_PLATFORM_EXTENSIONS_WITH_VERSION", "CL_DEVICE_EXTENSIONS_WITH_VERSION"}


def pi_values(path):
    """The query values of pi.api's platform and device info tables."""
    values, table = set(), None
    for line in open(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            parts = line.split()
            table = parts[1] if parts[0] == "info" else None
            continue
        if table in ("pi_platform_info", "pi_device_info"):
            values.add(int(line.split()[1], 0))
    return values


def cl_values(path):
    values = {}
    for m in re.finditer(r"#define\s+(CL_(?:PLATFORM|DEVICE)_\w+)\s+(0x[0-9A-Fa-f]+)",
                         open(path).read()):
        values.setdefault(m.group(1), int(m.group(2), 16))
    return values


def parse(path):
    """{(device index, property): value}; the platform index counts the
    platform blocks in order, the device part is clinfo's '*' or number."""
    props, platform, seen = {}, -1, {}
    for line in open(path, errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        suffix, dev, name, value = m.groups()
        if name == "CL_PLATFORM_NAME" and dev == "*":
            platform += 1
        props[(platform, dev, name)] = value.strip()
        seen[name] = True
    return props


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    pi, cl = pi_values(argv[1]), cl_values(argv[2])
    direct, traced = parse(argv[3]), parse(argv[4])
    if not direct:
        print("clinfo_compare: %s has no properties" % argv[3])
        return 2
    compared, bad, not_pi = 0, [], set()
    for key, want in sorted(direct.items()):
        name = key[2]
        if name not in cl or name in SKIP:
            continue
        if cl[name] not in pi and name not in DERIVED and name != FEATURES:
            not_pi.add(name)
            continue
        got = traced.get(key)
        if got is None:
            bad.append("%s: missing through pitrace (direct: %r)" % (key, want))
        elif name in LISTS:
            w, g = set(want.split()), set(got.split())
            if not g <= w or ("cl_khr_icd" in w and "cl_khr_icd" not in g and ":" not in want):
                bad.append("%s: %s not offered directly" % (key, sorted(g - w)))
        elif name == FEATURES:
            extra = set(got.split()) - set(want.split())
            if extra:
                bad.append("%s: %s not offered directly" % (key, sorted(extra)))
        elif name == "CL_DEVICE_BUILT_IN_KERNELS":
            if got:
                bad.append("%s: %r through pitrace, where none can be created" % (key, got))
        elif name == "CL_DEVICE_EXECUTION_CAPABILITIES":
            w = {t.strip() for t in want.split("|")} - {"CL_EXEC_NATIVE_KERNEL"}
            if {t.strip() for t in got.split("|")} != w:
                bad.append("%s: %r through pitrace, %r directly" % (key, got, want))
        elif got != want:
            bad.append("%s: %r through pitrace, %r directly" % (key, got, want))
        compared += 1
    print("clinfo_compare: %d properties compared, %d differ; PI cannot query %d: %s"
          % (compared, len(bad), len(not_pi), " ".join(sorted(not_pi))))
    for b in bad:
        print("  DIFFERS " + b)
    return 1 if bad or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
