"""Whether saved weights agree with a reference file, as PyTorch reads them.

    close_weights.py REF.safetensors OTHER.safetensors... [--tol 1e-5]

Each OTHER must hold the same tensor names as REF and every element within the
relative tolerance (|x - ref| / (|ref| + 1e-3)); prints each file's largest relative
difference and, when all agree, a last line "ok". Run with a Python that has torch.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from torch_interop import load  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("others", nargs="+")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    ref = load(args.ref)
    for path in args.others:
        z = load(path)
        assert sorted(z) == sorted(ref), (path, sorted(z), sorted(ref))
        worst = max(((z[k] - ref[k]).abs() / (ref[k].abs() + 1e-3)).max().item() for k in ref)
        print(os.path.basename(path), "max relative difference", worst)
        assert worst < args.tol, (path, worst)
    print("ok")


if __name__ == "__main__":
    main()
