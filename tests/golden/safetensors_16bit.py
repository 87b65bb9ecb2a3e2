# A safetensors file written by PyTorch 1.13 with float16 and bfloat16 tensors, for
# tests/nn/test_safetensors_16bit.cpp, which holds the bytes this prints. The format
# is written by hand (the safetensors package may be missing): an 8-byte little-endian
# header length, the JSON header, then each tensor's raw little-endian bytes. Beside
# each 16-bit tensor, its float32 value as PyTorch converts it ("<name>_f32").
# Run: /usr/bin/python3 tests/golden/safetensors_16bit.py  (PyTorch 1.13, CPU)
import json
import struct

import torch

h = torch.tensor([[1.0, -2.5, 65504.0, 6.103515625e-05], [5.9604644775390625e-08, 0.1, -0.0, 3.140625]],
                 dtype=torch.float16)
b = torch.tensor([[1.0, -2.5, 3.3895313892515355e38, 1e-30], [0.1, -0.0, 3.140625, 255.0]], dtype=torch.bfloat16)
tensors = [("h", h, "F16"), ("h_f32", h.float(), "F32"), ("b", b, "BF16"), ("b_f32", b.float(), "F32")]

header, data = {}, b""
for name, t, dtype in tensors:
    raw = t.view(torch.int16 if t.element_size() == 2 else torch.int32).numpy().tobytes()
    header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
header["__metadata__"] = {"written_by": "torch " + torch.__version__}
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)  # the format pads the header with spaces to 8 bytes
blob = struct.pack("<Q", len(text)) + text + data

print("// %d bytes, from tests/golden/safetensors_16bit.py (torch %s)" % (len(blob), torch.__version__))
for i in range(0, len(blob), 24):
    print('    "' + "".join("\\x%02x" % c for c in blob[i:i + 24]) + '"')
