#!/usr/bin/env python3
"""Program binaries built at compile time (`aotc compile --prebuild cpu`,
compiler/driver/prebuild.h) and loaded by the runtime in place of a build
(runtime/src/program_cache.h), with cold caches: a fresh PoCL kernel cache
for the whole process and a fresh aotc binary cache for every load.

  - The .so built with --prebuild cpu says so when compiled, loads with its
    program from the embedded binary (aotc_container_program_source 2,
    aotc inspect), writes nothing to the binary cache and matches ONNX
    Runtime at batch 1, 3 and 0; `aotc run` runs it.
  - Its embedded key names this host's instruction set extensions.
  - A copy whose key no longer matches this device (its "host isa" line, as
    on a CPU without these extensions, or its address bits) is built from
    source, is right, and fills the cache; aotc inspect names the line
    that differs.
  - a package (--package --prebuild cpu) loads its .so's embedded binary;
    its manifest lists the binary (device.program_binaries) with the .so's
    whole device key, and aotc inspect of the package names it; a package
    without --prebuild lists none and says so;
  - a program of a dozen kernels prebuilt with AOTC_BUILD_JOBS=2 embeds two
    parts for this device, both loaded (no compile, right outputs), and a
    copy for another ISA builds from source (aotc inspect: 2 binaries, 1
    device key); with AOTC_BUILD_JOBS=1 one program;
  - --prebuild cpu twice embeds one binary; --prebuild of a device this
    machine does not have is a compile error naming it and the devices;
    aotc-build-program refuses --key-out without --select.
  - A binary built apart (aotc compile --emit=cl, aotc-build-program
    --select cpu with the options from the source's header, then aotc
    compile --program-binary KEY,BIN, as for a device on another machine)
    loads embedded and is right; one built from another compile's source
    (other flags) is refused naming both sources, and so are a key file
    that is not one, and an argument without its comma.
Usage: check_prebuild.py AOTC    (prints "prebuild ok")
"""
import json
import os
import subprocess
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, ColdCaches, Net, net_feeds, compare_ort  # noqa: E402

# Before OpenCL starts in this process: PoCL's own kernel cache starts empty.
fresh_cache = ColdCaches()
tmp = fresh_cache.root

aotc = sys.argv[1]
tool = os.path.join(os.path.dirname(os.path.abspath(aotc)), "aotc-build-program")
rng = np.random.default_rng(58)
checks = Checks("prebuild")
fail = checks.fail


def compile_model(onnx_path, out, *flags):
    return subprocess.run([aotc, "compile", onnx_path, "-o", out, *flags],
                          capture_output=True, text=True)


def load_and_check(tag, so, want_source, proto):
    cache = fresh_cache()
    m = Model(so, device="cpu", cache_dir=cache)
    checks.check()
    if m.program_source != want_source:
        fail(f"{tag}: program source {m.program_source}, expected {want_source}")
    compare_ort(checks, tag, m, proto, net_feeds(proto, rng))
    checks.check()
    entries = os.listdir(cache)
    if want_source == 2 and entries:
        fail(f"{tag}: the embedded binary loaded, yet the cache got {entries}")
    if want_source == 0 and not entries:
        fail(f"{tag}: built from source, yet nothing was cached")


# A residual block over channel blocks: padded copies, convolutions, a sum.
n = Net("prebuilt", 32, (9, 11), rng)
n.output(n.residual_block("x", 32))
proto = n.model()
onnx_path = os.path.join(tmp, "block.onnx")
with open(onnx_path, "wb") as f:
    f.write(proto.SerializeToString())

so = os.path.join(tmp, "block.so")
r = compile_model(onnx_path, so, "--prebuild", "cpu")
checks.check()
if r.returncode != 0:
    fail(f"--prebuild cpu: {r.stderr.strip()}")
    checks.done()
if "aotc: embedded the program built for" not in r.stderr:
    fail(f"--prebuild cpu: no word of the embedded program: {r.stderr.strip()}")
load_and_check("embedded", so, 2, proto)

blob = open(so, "rb").read()
# The embedded key's last lines (the runtime's code in the .so holds the
# line names too, not after a number of address bits).
KEY_TAIL = b"address bits: 64\nhost isa: "
checks.check()
at = blob.find(KEY_TAIL)
at = at + len(KEY_TAIL) - len(b"host isa: ") if at >= 0 else at
if at < 0:
    fail("the embedded key has no host isa line")
else:
    isa = blob[at + 10:blob.index(b"\n", at)].decode().split()
    flags = set()
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    for feature in ("avx2", "fma", "avx512f", "avx512bw"):
        checks.check()
        if (feature in flags) != (feature in isa):
            fail(f"host isa {isa}: {feature} is {'' if feature in flags else 'not '}in /proc/cpuinfo")

env = dict(os.environ, AOTC_CACHE_DIR=fresh_cache())
r = subprocess.run([aotc, "inspect", so, "--device", "cpu"], capture_output=True, text=True, env=env)
checks.check()
if "program: the binary embedded for this device" not in r.stdout or "metadata aotc.prebuilt = " not in r.stdout:
    fail(f"aotc inspect: {r.stdout}{r.stderr}")
r = subprocess.run([aotc, "run", so, "--dim", "n=2", "--repeat", "2"], capture_output=True, text=True, env=env)
checks.check()
if r.returncode != 0:
    fail(f"aotc run: {r.stderr.strip()}")

# A package carries the binary inside its .so.
pkg = os.path.join(tmp, "block.aotpkg")
r = subprocess.run([aotc, "compile", onnx_path, "--package", pkg, "--prebuild", "cpu"],
                   capture_output=True, text=True)
checks.check()
if r.returncode != 0 or "aotc: embedded the program built for" not in r.stderr:
    fail(f"--package --prebuild cpu: rc {r.returncode}: {r.stderr.strip()}")
else:
    env = dict(os.environ, AOTC_CACHE_DIR=fresh_cache())
    r = subprocess.run([aotc, "inspect", pkg, "--device", "cpu"], capture_output=True, text=True, env=env)
    checks.check()
    if "program: the binary embedded for this device" not in r.stdout:
        fail(f"aotc inspect of the package: {r.stdout}{r.stderr}")
    # Its manifest lists the binary with the whole device key the .so
    # embeds, for a deployment tool that reads no .so.
    with zipfile.ZipFile(pkg) as z:
        manifest = json.loads(z.read("manifest.json"))
        so_bytes = z.read(next(n for n in z.namelist() if n.endswith(".so")))
    binaries = manifest["device"].get("program_binaries")
    checks.check()
    if not isinstance(binaries, list) or len(binaries) != 1:
        fail(f"manifest device.program_binaries: {binaries}")
    else:
        key = binaries[0]["device_key"]
        checks.check()
        if (not key.startswith("platform: ") or "\nhost isa: " not in key or
                key.encode() not in so_bytes):
            fail(f"manifest device key is not the .so's: {key!r}")
        checks.check()
        if f"  program binary: {binaries[0]['description']}" not in r.stdout:
            fail(f"aotc inspect of the package does not list the binary: {r.stdout}")
# A package without one says so.
plain_pkg = os.path.join(tmp, "plain.aotpkg")
r = subprocess.run([aotc, "compile", onnx_path, "--package", plain_pkg], capture_output=True, text=True)
checks.check()
if r.returncode != 0:
    fail(f"--package: rc {r.returncode}: {r.stderr.strip()}")
else:
    with zipfile.ZipFile(plain_pkg) as z:
        binaries = json.loads(z.read("manifest.json"))["device"].get("program_binaries")
    r = subprocess.run([aotc, "inspect", plain_pkg, "--device", "cpu"], capture_output=True, text=True,
                       env=dict(os.environ, AOTC_CACHE_DIR=fresh_cache()))
    checks.check()
    if binaries != [] or "program binaries: none" not in r.stdout:
        fail(f"a package without --prebuild: manifest {binaries}, inspect {r.stdout}")

# Keys of another device: same length, so the .so stays well formed.
for tag, old, new in [("another isa", KEY_TAIL, b"address bits: 64\nhost isa; "),
                      ("other address bits", KEY_TAIL, b"address bits: 46\nhost isa: ")]:
    checks.check()
    if blob.count(old) < 1:
        fail(f"{tag}: '{old.decode()}' is not in the .so")
        continue
    # Every copy (the descriptor's key and aotc inspect's metadata, one
    # string where the linker merged them).
    other = os.path.join(tmp, tag.replace(" ", "_") + ".so")
    with open(other, "wb") as f:
        f.write(blob.replace(old, new))
    load_and_check(tag, other, 0, proto)
    env = dict(os.environ, AOTC_CACHE_DIR=fresh_cache())
    r = subprocess.run([aotc, "inspect", other, "--device", "cpu"], capture_output=True, text=True, env=env)
    checks.check()
    want = "built for  " + new.decode().split("\n")[0 if tag == "other address bits" else 1]
    if "none for this device's key" not in r.stdout or want not in r.stdout:
        fail(f"{tag}: aotc inspect does not say how the key differs ('{want}'): {r.stdout}")

twice = os.path.join(tmp, "twice.so")
r = compile_model(onnx_path, twice, "--prebuild", "cpu", "--prebuild", "cpu")
checks.check()
if r.returncode != 0 or r.stderr.count("aotc: embedded the program") != 1:
    fail(f"--prebuild cpu twice: {r.stderr.strip()}")
elif open(twice, "rb").read().count(KEY_TAIL) != blob.count(KEY_TAIL):
    fail("--prebuild cpu twice: not one key in the .so")

r = compile_model(onnx_path, os.path.join(tmp, "none.so"), "--prebuild", "no-such-device-xyz")
checks.check()
if r.returncode == 0 or "--prebuild no-such-device-xyz" not in r.stderr or "no OpenCL device matches" not in r.stderr:
    fail(f"--prebuild of a missing device: rc {r.returncode}: {r.stderr.strip()}")

r = subprocess.run([tool, "--platform", "p", "--device", "d", "--options", "", "--source", onnx_path,
                    "--out", os.path.join(tmp, "x.bin"), "--key-out", os.path.join(tmp, "x.key")],
                   capture_output=True, text=True)
checks.check()
if r.returncode != 2 or "--key-out needs --select" not in r.stderr:
    fail(f"aotc-build-program --key-out without --select: rc {r.returncode}: {r.stderr.strip()}")

# Built apart, as on a machine that has the device.
cl = os.path.join(tmp, "block.cl")
with open(cl, "w") as f:
    f.write(subprocess.run([aotc, "compile", onnx_path, "--emit=cl"], capture_output=True,
                           text=True, check=True).stdout)
bin_path, key_path = os.path.join(tmp, "block.bin"), os.path.join(tmp, "block.key")
r = subprocess.run([tool, "--select", "cpu", "--source", cl, "--out", bin_path, "--key-out", key_path],
                   capture_output=True, text=True)
checks.check()
if r.returncode != 0:
    fail(f"aotc-build-program --select cpu: rc {r.returncode}: {r.stderr.strip()}")
else:
    apart = os.path.join(tmp, "apart.so")
    r = compile_model(onnx_path, apart, "--program-binary", f"{key_path},{bin_path}")
    checks.check()
    if r.returncode != 0 or "aotc: embedded the program built for" not in r.stderr:
        fail(f"--program-binary: rc {r.returncode}: {r.stderr.strip()}")
    else:
        load_and_check("built apart", apart, 2, proto)
    # Another compile's source: the AVX-512 profile tiles differently.
    r = compile_model(onnx_path, os.path.join(tmp, "other.so"), "--device-profile", "generic-avx512",
                      "--program-binary", f"{key_path},{bin_path}")
    checks.check()
    if r.returncode == 0 or "built from another OpenCL program than this compile's" not in r.stderr:
        fail(f"--program-binary from another source: rc {r.returncode}: {r.stderr.strip()}")
    r = compile_model(onnx_path, os.path.join(tmp, "nokey.so"), "--program-binary", f"{cl},{bin_path}")
    checks.check()
    if r.returncode == 0 or "not a program key" not in r.stderr:
        fail(f"--program-binary with a source as key: rc {r.returncode}: {r.stderr.strip()}")
r = compile_model(onnx_path, os.path.join(tmp, "nocomma.so"), "--program-binary", key_path)
checks.check()
if r.returncode == 0 or "expected KEY,BIN" not in r.stderr:
    fail(f"--program-binary without a comma: rc {r.returncode}: {r.stderr.strip()}")


# A program of a dozen kernels, prebuilt in two parts by two tools at once
# (AOTC_BUILD_JOBS=2; program_split.h): both embedded for this device, the
# load takes them both (each kernel from its part) and compiles nothing; a
# copy whose key does not match builds from source; AOTC_BUILD_JOBS=1
# embeds one program.
big = Net("parts", 32, (9, 11), rng)
y = "x"
for _ in range(6):
    y = big.residual_block(y, 32)
big.output(y)
big_proto = big.model()
big_onnx = os.path.join(tmp, "blocks.onnx")
with open(big_onnx, "wb") as f:
    f.write(big_proto.SerializeToString())
for jobs, want in (("2", 2), ("1", 1)):
    out = os.path.join(tmp, f"blocks{jobs}.so")
    # One function per kernel (the blocks would share five, too few to
    # split: share_kernels.h), each launched on its own (a persistent kernel
    # runs them all: persistent_kernels.h).
    r = subprocess.run([aotc, "compile", big_onnx, "-o", out, "--prebuild", "cpu",
                        "--no-share-kernels", "--no-persistent-kernels"],
                       capture_output=True, text=True, env=dict(os.environ, AOTC_BUILD_JOBS=jobs))
    checks.check()
    said = r.stderr.count("aotc: embedded the program built for")
    parts_said = all(f"(part {i} of 2)" in r.stderr for i in (1, 2))
    if r.returncode != 0 or said != want or (want == 2) != parts_said:
        fail(f"--prebuild cpu with AOTC_BUILD_JOBS={jobs}: rc {r.returncode}, {said} binaries "
             f"(expected {want}): {r.stderr.strip()}")
        continue
    load_and_check(f"{want} embedded part(s)", out, 2, big_proto)
    if want == 2:
        r = subprocess.run([aotc, "inspect", out, "--device", "cpu"], capture_output=True, text=True,
                           env=dict(os.environ, AOTC_CACHE_DIR=fresh_cache()))
        checks.check()
        if ("program: the binary embedded for this device" not in r.stdout or
                "(part 1 of 2); " not in r.stdout or "(part 2 of 2)" not in r.stdout):
            fail(f"aotc inspect of the parts: {r.stdout}")
        parts_blob = open(out, "rb").read()
        other = os.path.join(tmp, "blocks_other_isa.so")
        with open(other, "wb") as f:
            f.write(parts_blob.replace(KEY_TAIL, b"address bits: 64\nhost isa; "))
        load_and_check("parts for another isa", other, 0, big_proto)
        r = subprocess.run([aotc, "inspect", other, "--device", "cpu"], capture_output=True, text=True,
                           env=dict(os.environ, AOTC_CACHE_DIR=fresh_cache()))
        checks.check()
        if "embedded program binaries: 2 (1 device key), none for this device's key" not in r.stdout:
            fail(f"aotc inspect of parts for another isa: {r.stdout}")

checks.done()
