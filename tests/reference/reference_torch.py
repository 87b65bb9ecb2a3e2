# PyTorch's side of the reference sweep (docs/reference_sweep.md): rebuilding a case's inputs from the
# runner's JSON, normalising outputs, and the helpers the rows' PyTorch expressions call (IDX, PUT, DT, LSTM,
# GRU, NLLB, BNB, NBN), each the PyTorch equivalent of a ddl call with no one-line torch form.
import base64
import math

import torch

F = torch.nn.functional
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "uint8": torch.uint8,
          "bool": torch.bool, "int8": torch.int8, "int16": torch.int16}
NAMES = {v: k for k, v in DTYPES.items()}


def decode(e):
    if e is None:
        return None
    dt = DTYPES[e["dtype"]]
    raw = base64.b64decode(e["data"])
    t = torch.frombuffer(bytearray(raw), dtype=dt).clone() if raw else torch.empty(0, dtype=dt)
    return t.reshape(e["shape"])


def with_layout(t, e):
    lay = e.get("layout", "contiguous")
    if lay == "transposed":
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if lay == "stepped":
        buf = torch.zeros(list(t.shape[:-1]) + [2 * t.shape[-1]], dtype=t.dtype)
        buf[..., ::2] = t
        return buf[..., ::2]
    if lay == "expanded":
        d = e["expand_dim"]
        return t.select(d, 0).unsqueeze(d).expand(t.shape)
    return t


def as_list(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (bool, int, float)):
        return [torch.tensor(out)]
    if isinstance(out, (tuple, list)):
        flat = []
        for o in out:
            flat.extend(as_list(o) if not isinstance(o, torch.Tensor) else [o])
        return flat
    if out is None:
        return [None]
    raise TypeError(f"unexpected output type {type(out)}")


def IDX(spec, tensors):
    """The index tuple of an args "spec" (rows_index.cpp), over the case's inputs."""
    out = []
    for e in spec:
        if e == "none":
            out.append(None)
        elif e == "ellipsis":
            out.append(Ellipsis)
        elif "int" in e:
            out.append(e["int"])
        elif "slice" in e:
            out.append(slice(*e["slice"]))
        else:
            out.append(tensors[e["tensor"]])
    return tuple(out)


def PUT(x, idx, values, accumulate):
    """ddl's index_put: x[idx] = values on a copy (accumulate: index_put_ with the index tensors)."""
    y = x.clone()
    if accumulate:
        return y.index_put_(idx, values, True)
    y[idx] = values
    return y


SHORT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
         "i64": torch.int64, "i32": torch.int32, "u8": torch.uint8, "bool": torch.bool,
         "i8": torch.int8, "i16": torch.int16}


def DT(name):
    """A torch dtype from the sweep's short name (samples.cpp's short_name)."""
    return SHORT[name]


def LSTM(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
    """ddl's lstm_layer: one direction of torch's LSTM, outputs in input order."""
    xs = x.flip(0) if reverse else x
    out, h, c = torch._VF.lstm(xs, (h0.unsqueeze(0), c0.unsqueeze(0)), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0,
                               False, False, False)
    return out.flip(0) if reverse else out, h[0], c[0]


def GRU(x, h0, w_ih, w_hh, b_ih, b_hh, reverse):
    xs = x.flip(0) if reverse else x
    out, h = torch._VF.gru(xs, h0.unsqueeze(0), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, False, False, False)
    return out.flip(0) if reverse else out, h[0]


def NLLB(g, lp, t, through, reduction, ignore_index, label_smoothing):
    """ddl's nll_loss_backward: the gradient w.r.t. log_probs, or w.r.t. logits with lp = log_softmax(logits)."""
    x = lp.detach().requires_grad_(True)
    if through:
        loss = F.cross_entropy(x, t, ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing)
    else:
        loss = F.nll_loss(x, t, ignore_index=ignore_index, reduction=reduction)
    return torch.autograd.grad(loss, x, g)[0]


def BNB(g, x, w, m, s, train, eps):
    """ddl's batch_norm_backward: eval uses the saved statistics as running ones."""
    if train:
        return torch.ops.aten.native_batch_norm_backward(g, x, w, None, None, m, s, True, eps, [True, True, True])
    return torch.ops.aten.native_batch_norm_backward(g, x, w, m, s.pow(-2) - eps, None, None, False, eps,
                                                     [True, True, True])


def NBN(x, w, b, rm, rv, training, momentum, eps):
    """ddl's Tensor batch_norm: (y, mean used, invstd used), the running ones in eval."""
    F.batch_norm(x, None if rm is None else rm.clone(), None if rv is None else rv.clone(), w, b, training,
                 momentum, eps)  # its argument checks (native_batch_norm skips some)
    y, m, s = torch.native_batch_norm(x, w, b, rm, rv, training, momentum, eps)
    if not training:
        m, s = rm.to(m.dtype), (rv + eps).rsqrt().to(s.dtype)
    return y, m, s


def PYNUM(v):
    """A C++ double scalar as the Python number ddl reads it as (Note [Scalar operands] in tensor/ops/elementwise.cpp):
    an integral value in int64's range is an int, anything else (and -0.0, which an int cannot hold) a float."""
    if isinstance(v, float) and v.is_integer() and -2.0**63 <= v < 2.0**63 and not (v == 0 and math.copysign(1, v) < 0):
        return int(v)
    return v


def LAST_DIMS(x, k):
    """The last k sizes of x, which must have k dims (a slice would quietly take fewer)."""
    if k > x.dim():
        raise RuntimeError(f"cannot take the last {k} dims of a {x.dim()}-d tensor")
    return x.shape[x.dim() - k:]


GLOBALS = {"torch": torch, "F": F, "math": math, "IDX": IDX, "PUT": PUT, "DT": DT, "LSTM": LSTM, "GRU": GRU,
           "NLLB": NLLB, "BNB": BNB, "NBN": NBN, "PYNUM": PYNUM,
           "LAST_DIMS": LAST_DIMS}
