#!/usr/bin/env python3
"""Packages through the aotc CLI, end to end, on the bundled example model.

  - `aotc compile M.onnx --package P` (no -o) writes P and nothing else;
    Python's zipfile reads it (a standard zip) and finds the manifest's
    entries, the weights stored;
  - `aotc run P` prints the same outputs as `aotc run` of a plain .so of the
    same model (same seed), also after zipfile rewrote P with zip64 records
    and the weights off a page boundary; `aotc inspect P` prints the
    manifest summary;
  - packages crafted with zipfile (a '..' entry, a symlink, a manifest for
    another CPU architecture, a truncated file) end `aotc run` with exit code
    1 and a message naming the package, never a signal.
Usage: check_package.py AOTC
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def output_lines(text):
    return [l for l in text.splitlines() if l.startswith("output ")]


def main():
    aotc = os.path.abspath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    model = os.path.join(root, "examples", "models", "mlp_gelu.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AOTC_CACHE_DIR=os.path.join(tmp, "cache"))
        pkg = os.path.join(tmp, "mlp.aotpkg")
        r = run([aotc, "compile", model, "--package", pkg], env=env)
        assert r.returncode == 0, r.stderr
        assert sorted(os.listdir(tmp)) == ["mlp.aotpkg"], os.listdir(tmp)
        with zipfile.ZipFile(pkg) as z:
            assert z.testzip() is None
            manifest = json.loads(z.read("manifest.json"))
            names = {i.filename: i for i in z.infolist()}
            for e in manifest["entries"]:
                info = names[e["name"]]
                assert info.file_size == e["size"] and info.CRC == e["crc32"], e
            weights = [e for e in manifest["entries"] if e["role"] == "weights"]
            assert len(weights) == 1 and manifest["model"]["weights"] == "side-file"
            assert names[weights[0]["name"]].compress_type == zipfile.ZIP_STORED
            entries = {n: z.read(n) for n in names}
            infos = list(z.infolist())

        plain = os.path.join(tmp, "plain.so")
        r = run([aotc, "compile", model, "-o", plain], env=env)
        assert r.returncode == 0, r.stderr
        a = run([aotc, "run", plain, "--dim", "batch=3"], env=env)
        b = run([aotc, "run", pkg, "--dim", "batch=3"], env=env)
        assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
        assert output_lines(a.stdout) and output_lines(a.stdout) == output_lines(b.stdout), \
            (a.stdout, b.stdout)
        i = run([aotc, "inspect", pkg], env=env)
        assert i.returncode == 0, i.stderr
        for want in ("package: " + pkg, "format version 1", "weights: side-file",
                     "symbol batch in [", "input x: float32[batch, 64]"):
            assert want in i.stdout, (want, i.stdout)

        # The same entries rewritten by zipfile with zip64 records everywhere
        # (every size and offset in zip64 extra fields, a zip64 end record)
        # and the weights no longer on a page boundary: loads and runs alike.
        z64 = os.path.join(tmp, "zip64.aotpkg")
        limit = zipfile.ZIP64_LIMIT
        zipfile.ZIP64_LIMIT = 1
        try:
            with zipfile.ZipFile(z64, "w") as z:
                for info in infos:
                    z.writestr(info, entries[info.filename])
        finally:
            zipfile.ZIP64_LIMIT = limit
        with open(z64, "rb") as f:
            raw = f.read()
        assert b"PK\x06\x06" in raw[-200:]
        with zipfile.ZipFile(z64) as z:
            at = z.getinfo(weights[0]["name"]).header_offset
        name_len, extra_len = struct.unpack("<HH", raw[at + 26:at + 30])
        assert (at + 30 + name_len + extra_len) % 4096 != 0
        c = run([aotc, "run", z64, "--dim", "batch=3"], env=env)
        assert c.returncode == 0, c.stderr
        assert output_lines(c.stdout) == output_lines(a.stdout), (c.stdout, a.stdout)

        def craft(name, edit):
            path = os.path.join(tmp, name)
            with zipfile.ZipFile(path, "w") as z:
                for info in infos:
                    data = entries[info.filename]
                    if info.filename == "manifest.json":
                        data = edit.get("manifest", lambda d: d)(data)
                    z.writestr(info, data)
                for extra in edit.get("extra", []):
                    z.writestr(*extra)
            return path

        def evil_link():
            info = zipfile.ZipInfo("model/link.so")
            info.create_system = 3
            info.external_attr = 0o120777 << 16
            return (info, "/etc/passwd")

        def other_arch(data):
            m = json.loads(data)
            m["target"]["arch"] = "aarch64"
            return json.dumps(m)

        cases = [
            (craft("dotdot.aotpkg", {"extra": [("model/../../x.so", b"x")]}),
             "has a '..' component"),
            (craft("link.aotpkg", {"extra": [evil_link()]}), "is a symbolic link"),
            (craft("arch.aotpkg", {"manifest": other_arch}),
             "built for aarch64/linux, this host is"),
        ]
        truncated = os.path.join(tmp, "truncated.aotpkg")
        with open(pkg, "rb") as f:
            data = f.read()
        with open(truncated, "wb") as f:
            f.write(data[: len(data) // 2])
        cases.append((truncated, "truncated"))
        for path, message in cases:
            r = run([aotc, "run", path], env=env)
            assert r.returncode == 1, (path, r.returncode, r.stderr)
            assert "aotc: error: package '%s'" % path in r.stderr, r.stderr
            assert message in r.stderr, (message, r.stderr)
    print("package cli ok")


if __name__ == "__main__":
    main()
