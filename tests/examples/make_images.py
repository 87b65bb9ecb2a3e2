#!/usr/bin/env python3
"""Writes a small labelled image set for the custom-dataset example: OUT/<class>/<n>.ppm
(binary PPM, which stb_image reads) and OUT/info.txt with one "path label split" line per
image, as pytorch/examples' cpp/custom-dataset expects. Three classes a small network can
tell apart: horizontal stripes, vertical stripes and a disk, each with a random colour,
phase and noise; the first two thirds of each class are train, the rest test.
Usage: make_images.py OUT [PER_CLASS] [SEED]"""
import os
import random
import sys


def image(kind, rng, size=40):
    colour = [rng.randint(120, 255) for _ in range(3)]
    phase, period = rng.randint(0, 7), rng.randint(6, 10)
    cx, cy, r = rng.randint(12, 28), rng.randint(12, 28), rng.randint(6, 11)
    px = bytearray()
    for y in range(size):
        for x in range(size):
            if kind == 0:
                on = (y + phase) % period < period // 2
            elif kind == 1:
                on = (x + phase) % period < period // 2
            else:
                on = (x - cx) ** 2 + (y - cy) ** 2 <= r * r
            for c in colour:
                v = (c if on else 30) + rng.randint(-25, 25)
                px.append(max(0, min(255, v)))
    return b"P6\n%d %d\n255\n" % (size, size) + bytes(px)


def main():
    out = sys.argv[1]
    per_class = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    lines = []
    for label, name in enumerate(["hstripes", "vstripes", "disk"]):
        os.makedirs(os.path.join(out, name), exist_ok=True)
        for n in range(per_class):
            rel = "%s/%03d.ppm" % (name, n)
            with open(os.path.join(out, rel), "wb") as f:
                f.write(image(label, rng))
            lines.append("%s %d %s" % (rel, label, "train" if n < per_class * 2 // 3 else "test"))
    with open(os.path.join(out, "info.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
