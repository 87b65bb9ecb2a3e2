#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus, corpus/<target>/: small, valid files of each
format (plus a few near-misses), so fuzzing starts past the parsers' first checks.
Run from anywhere: /usr/bin/python3 tests/fuzz/make_seeds.py (Debian python3-pil for images).
The first byte of idx, cifar and image seeds selects a mode (see each fuzz_*.cpp)."""
import gzip, io, json, os, struct, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, raw bytes)] -> the file's bytes (the format's own layout)."""
    header, body = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + body


f32 = lambda *v: struct.pack("<%df" % len(v), *v)
put("safetensors", "f32_i64_u8", safetensors([("w", "F32", [2, 2], f32(1, 2, 3, 4)),
                                               ("n", "I64", [1], struct.pack("<q", 7)),
                                               ("b", "U8", [3], b"\x01\x02\x03")], {"note": "seed"}))
put("safetensors", "scalar_and_empty", safetensors([("s", "F32", [], f32(0.5)), ("e", "F32", [0, 3], b"")]))
put("safetensors", "empty", safetensors([]))
put("safetensors", "f64_bf16", safetensors([("d", "F64", [2], struct.pack("<2d", 1.0, -2.0)),
                                             ("h", "BF16", [2], b"\x80\x3f\x00\x40")]))

# Snapshot of a Linear(3, 2) with SGD(momentum 0.9), seed 1, batch 4: what fuzz_snapshot loads.
meta = {"epoch": "1", "step_in_epoch": "2", "global_step": "5", "seed": "1", "world_size": "1",
        "rng_offset": "0", "batch_size": "4", "optimizer.group.0.num_params": "2",
        "optimizer.group.0.lr": "0.10000000000000001", "optimizer.group.0.momentum": "0.90000000000000002",
        "optimizer.group.0.dampening": "0", "optimizer.group.0.weight_decay": "0", "optimizer.group.0.nesterov": "0"}
tensors = [("weight", "F32", [2, 3], f32(*range(6))), ("bias", "F32", [2], f32(1, 2)),
           ("optimizer.state.0.momentum_buffer", "F32", [2, 3], f32(*[0.1] * 6)),
           ("optimizer.state.1.momentum_buffer", "F32", [2], f32(0.2, 0.3))]
put("snapshot", "linear_sgd", safetensors(tensors, meta))
put("snapshot", "no_optimizer_state", safetensors(tensors[:2], meta))
put("snapshot", "wrong_seed", safetensors(tensors, dict(meta, seed="2")))

# IDX: mode byte (bit 0: labels, bit 1: gzip the rest first), then the file.
images = struct.pack(">IIII", 2051, 2, 3, 4) + bytes(range(24))
labels = struct.pack(">II", 2049, 3) + b"\x00\x05\x09"
put("idx", "images", b"\x00" + images)
put("idx", "labels", b"\x01" + labels)
put("idx", "images_gz_by_target", b"\x02" + images)
put("idx", "labels_gz_by_target", b"\x03" + labels)
put("idx", "images_gz_file", b"\x00" + gzip.compress(images, mtime=0))
put("idx", "labels_gz_file", b"\x01" + gzip.compress(labels, mtime=0))
put("idx", "truncated", b"\x00" + images[:-5])

# CIFAR: mode byte (0: CIFAR-10, 1: CIFAR-100 fine, 2: coarse), then whole records.
rec10 = lambda label, v: bytes([label]) + bytes([v]) * 3072
rec100 = lambda coarse, fine, v: bytes([coarse, fine]) + bytes([v]) * 3072
put("cifar", "cifar10_two", b"\x00" + rec10(3, 10) + rec10(9, 200))
put("cifar", "cifar100_fine", b"\x01" + rec100(4, 57, 1) + rec100(19, 99, 2))
put("cifar", "cifar100_coarse", b"\x02" + rec100(0, 0, 3))
put("cifar", "cifar10_partial", b"\x00" + rec10(1, 0)[:100])

# Images: mode byte (channels = 1 + byte % 4), then a small image in each format stb reads.
try:
    from PIL import Image
except ImportError:
    sys.exit("make_seeds.py: the image seeds need Pillow (python3-pil)")
img = Image.new("RGB", (5, 3))
img.putdata([(40 * x, 80 * y, 255 - 30 * x) for y in range(3) for x in range(5)])
for mode, fmt, kw in [(2, "PNG", {}), (0, "PNG", {}), (2, "JPEG", {"quality": 90}), (3, "BMP", {}),
                      (2, "TGA", {}), (0, "GIF", {}), (2, "PPM", {})]:
    src = img.convert("L") if mode == 0 and fmt == "PNG" else img
    buf = io.BytesIO()
    src.save(buf, fmt, **kw)
    put("image", f"{fmt.lower()}_{mode + 1}ch", bytes([mode]) + buf.getvalue())
buf = io.BytesIO()
img.convert("RGBA").save(buf, "PNG")
put("image", "png_rgba_4ch", b"\x03" + buf.getvalue())
buf = io.BytesIO()
img.save(buf, "JPEG", progressive=True)
put("image", "jpeg_progressive_3ch", b"\x02" + buf.getvalue())
# More JPEG shapes for libjpeg-turbo (data/jpeg_decode.cpp): greyscale, CMYK with Adobe's
# marker, 4:4:4 with optimized Huffman tables, 4:2:0 over several MCUs, progressive greyscale.
big = Image.new("RGB", (19, 17))
big.putdata([(13 * x, 15 * y, (x * y) % 256) for y in range(17) for x in range(19)])
for name, mode, src, kw in [("jpeg_grey_1ch", 0, img.convert("L"), {}),
                            ("jpeg_cmyk_3ch", 2, img.convert("CMYK"), {}),
                            ("jpeg_444_optimized_4ch", 3, img, {"subsampling": 0, "optimize": True}),
                            ("jpeg_420_mcus_3ch", 2, big, {"subsampling": 2, "quality": 50}),
                            ("jpeg_progressive_grey_2ch", 1, big.convert("L"), {"progressive": True})]:
    buf = io.BytesIO()
    src.save(buf, "JPEG", **kw)
    put("image", name, bytes([mode]) + buf.getvalue())

# Store wire: byte 0 bit 0 prepends a valid HELLO; then length-prefixed request frames.
u32 = lambda v: struct.pack("<I", v)
i64 = lambda v: struct.pack("<q", v)
s = lambda b: u32(len(b)) + b
frame = lambda body: u32(len(body)) + body
hello = lambda token: frame(b"\x01" + u32(0x534C4444) + u32(1) + s(token))
put("store_wire", "set_get_add_check_wait", b"\x01" + frame(b"\x02" + s(b"k") + s(b"v")) +
    frame(b"\x03" + s(b"k") + i64(10)) + frame(b"\x04" + s(b"n") + i64(3)) +
    frame(b"\x05" + u32(2) + s(b"k") + s(b"n")) + frame(b"\x06" + u32(1) + s(b"k") + i64(10)))
put("store_wire", "get_missing_short_timeout", b"\x01" + frame(b"\x03" + s(b"absent") + i64(1)))
put("store_wire", "hello_right_token", b"\x00" + hello(b"fuzz-token") + frame(b"\x05" + u32(1) + s(b"k")))
put("store_wire", "hello_wrong_token", b"\x00" + hello(b"guess"))
put("store_wire", "add_not_a_number", b"\x01" + frame(b"\x02" + s(b"x") + s(b"abc")) + frame(b"\x04" + s(b"x") + i64(1)))

# Launch environment: lines of (variable index byte, value); indices as in fuzz_launch_env.cpp.
env = lambda pairs: b"\n".join(bytes([i]) + v for i, v in pairs)
put("launch_env", "torchrun", env([(0, b"1"), (1, b"4"), (2, b"1"), (3, b"2"), (4, b"10.0.0.1"), (5, b"29501")]))
put("launch_env", "openmpi", env([(10, b"0"), (11, b"2"), (12, b"0"), (13, b"2"), (14, b"prterun-host-123@1")]))
put("launch_env", "slurm", env([(16, b"3"), (17, b"8"), (18, b"1"), (20, b"4(x2)"), (21, b"node[03-05,7],gpu1"),
                               (23, b"1234"), (24, b"2")]))
put("launch_env", "token_restart", env([(0, b"0"), (1, b"1"), (8, b"secret"), (6, b"2"), (9, b"1")]))
put("launch_env", "bad_port", env([(0, b"0"), (1, b"1"), (5, b"70000")]))
# Trace merge: the three int64 sizes another rank announces, then its events and info.
tm = lambda ev, info, dropped=0: struct.pack("<qqq", len(ev), len(info), dropped) + ev + info
put("trace_merge", "two_events", tm(b'{"ph":"X","ts":1,"dur":2},\n{"ph":"i","ts":3}', b'{"pid":1,"name":"rank 1"}'))
put("trace_merge", "no_events", tm(b"", b'{"pid":1}', 5))
put("trace_merge", "negative_count", struct.pack("<qqq", -8, 2, 0) + b"{}")
# Resume: rank 0's transfer header (magic, size, piece as int64), then a rank's record.
rw = lambda size, piece, rec, magic=0x64646C736E617031: struct.pack("<qqq", magic, size, piece) + rec
put("resume_wire", "snapshot", rw(4096, 16 << 20, b"S\n/ckpt/snap\nepoch 1, step 8, global step 8\n"
                                   b"seed 5, world size 2, rng offset 0, state digest 00ff00ff00ff00ff"))
put("resume_wire", "no_file", rw(-1, 16 << 20, b"N\n/ckpt/snap\n\n"))
put("resume_wire", "error_lines", rw(0, 1, b"E\n/ckpt/snap\n\nsnapshot /ckpt/snap: tensor 'w'\nholds 1 NaN"))
put("resume_wire", "bad_magic", rw(1 << 41, 0, b"X", magic=7))
print("make_seeds.py: wrote", root)
