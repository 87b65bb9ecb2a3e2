# Writes tiny, learnable datasets in the on-disk formats train_cifar reads, for the
# end-to-end tests: MNIST IDX files, the CIFAR-10 binary version and an image folder
# of PNGs. Class c is a fixed pattern plus noise, so a few steps of training learn it.
# It only writes files; the checks live in the shell scripts and check_outputs.py.
#   python3 make_datasets.py mnist|cifar10|folder DIR [--train N] [--test N]
import argparse
import os
import random
import struct
import zlib


def pattern(c, n, rng):
    """n bytes: class c's stripe (every 10th byte from offset c is bright), plus noise."""
    return bytes(min(255, (200 if i % 10 == c else 30) + rng.randrange(40)) for i in range(n))


def colour(c, planes, rng):
    """Colour planes (planar RGB) in class c's colour, plus noise: survives crops and flips."""
    level = [20 + 22 * c, 200 - 22 * c, 40 + 150 * (c % 2)]  # a distinct red level per class
    return b"".join(bytes(level[k] + rng.randrange(30) for _ in range(planes)) for k in range(3))


def labels(n, rng, classes=10):
    # Every class appears, then a shuffle: both splits hold each class.
    out = [i % classes for i in range(n)]
    rng.shuffle(out)
    return out


def write_mnist(root, n_train, n_test, rng):
    # IDX: big-endian magic, counts and sizes, then raw bytes (docs/data.md).
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        ys = labels(n, rng)
        with open(os.path.join(root, prefix + "-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28))
            for y in ys:
                f.write(pattern(y, 28 * 28, rng))
        with open(os.path.join(root, prefix + "-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + bytes(ys))


def write_cifar10(root, n_train, n_test, rng):
    # 3,073-byte records: label, then the red, green and blue 32x32 planes.
    # Training records are spread over the five data_batch files the reader expects.
    def write(path, ys):
        with open(path, "wb") as f:
            for y in ys:
                f.write(bytes([y]) + colour(y, 32 * 32, rng))

    ys = labels(n_train, rng)
    for i in range(5):
        write(os.path.join(root, "data_batch_%d.bin" % (i + 1)), ys[i * n_train // 5:(i + 1) * n_train // 5])
    write(os.path.join(root, "test_batch.bin"), labels(n_test, rng))


def png(width, height, rgb):
    """A truecolour 8-bit PNG of `rgb` (height rows of width*3 bytes)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + rgb[r * width * 3:(r + 1) * width * 3] for r in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


FOLDER_CLASSES = ["circle", "square", "star"]


def write_folder(root, n_train, n_test, rng):
    # root/{train,test}/<class>/<i>.png, 16x16 (the app resizes to 32x32).
    for split, n in (("train", n_train), ("test", n_test)):
        for i, y in enumerate(labels(n, rng, len(FOLDER_CLASSES))):
            d = os.path.join(root, split, FOLDER_CLASSES[y])
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "%03d.png" % i), "wb") as f:
                f.write(png(16, 16, pattern(y, 16 * 16 * 3, rng)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["mnist", "cifar10", "folder"])
    p.add_argument("dir")
    p.add_argument("--train", type=int, default=80)
    p.add_argument("--test", type=int, default=40)
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rng = random.Random(1234)
    {"mnist": write_mnist, "cifar10": write_cifar10, "folder": write_folder}[a.kind](a.dir, a.train, a.test, rng)


if __name__ == "__main__":
    main()
