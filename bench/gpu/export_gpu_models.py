#!/usr/bin/python3
"""Writes the GPU suite's ONNX models: the CPU suite's (bench/cpu/models.py) with the networks'
initializers under their state_dict names (export_models.py --keep-names), plus gemm_8192.
Usage: /usr/bin/python3 bench/gpu/export_gpu_models.py --out DIR NAME ..."""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "cpu"))
import export_models as ex  # noqa: E402
import models as registry  # noqa: E402

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names:
        model = registry.GPU_BY_NAME.get(name)
        if model is None:
            sys.exit(f"export_gpu_models: unknown model {name!r}")
        print(f"export_gpu_models: {name}", flush=True)
        ex.export(model, os.path.join(args.out, name + ".onnx"), keep_names=True)


if __name__ == "__main__":
    main()
