"""The PIL side of tests/data/test_jpeg_pil.cpp: writes two JPEGs C++'s stb_image_write
cannot (progressive, greyscale) from a closed-form pattern into DIR/pil/, then decodes
every .jpg under DIR with PIL (Debian's python3-pil, which decodes through the same
libjpeg-turbo) and writes its pixels next to it as <file>.raw, in PIL's own mode (RGB or L).

Usage: /usr/bin/python3 pil_jpeg.py DIR
"""
import pathlib
import sys

from PIL import Image

root = pathlib.Path(sys.argv[1])
w, h = 37, 23  # not multiples of the 8x8 / 16x16 blocks, so edge handling is exercised too
rgb = bytes((x * 7 + y * 3 + c * 50) % 256 for y in range(h) for x in range(w) for c in range(3))
(root / "pil").mkdir(parents=True, exist_ok=True)
Image.frombytes("RGB", (w, h), rgb).save(root / "pil" / "progressive.jpg", quality=85, progressive=True)
Image.frombytes("L", (w, h), rgb[::3]).save(root / "pil" / "grey.jpg", quality=90)
for path in sorted(root.rglob("*.jpg")):
    with Image.open(path) as im:
        im.load()
        (path.parent / (path.name + ".raw")).write_bytes(im.mode.encode() + b"\n" + im.tobytes())
print("decoded", len(list(root.rglob("*.jpg.raw"))), "files with PIL", Image.__version__)
