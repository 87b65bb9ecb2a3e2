# The public ops: the free functions in namespace ddl (and ddl::nn::functional) declared by the headers
# that tensor/ops.h, autograd/functions.h (its autograd/ops/*.h) and nn/functional.h pull in. The sweep
# fails when one has no row (compare.py) and is not listed in NOT_OPS with a reason.
import re
from pathlib import Path

# Public names that are not tensor ops, each with why it has no row.
NOT_OPS = {
    "set_num_threads": "thread-pool setting, not an op",
    "get_num_threads": "thread-pool setting, not an op",
    "parallel_for": "loop helper for kernels, not an op",
    "default_generator": "returns the global random generator",
    "manual_seed": "seeds the global random generator",
    "philox4x32": "the counter-based RNG primitive; PyTorch draws differently",
    "copy_between_devices": "device transfer helper; CPU-only sweep",
    "is_available": "CUDA query",
    "device_count": "CUDA query",
    "set_allow_tf32": "CUDA setting",
    "allow_tf32": "CUDA setting",
    "memory_stats": "allocator statistics",
    "empty_cache": "allocator control",
    "synchronize": "CUDA stream control",
    "current_stream": "CUDA stream control",
    "set_current_stream": "CUDA stream control",
    "record_stream": "CUDA stream control",
    "dtype_size": "dtype metadata, not an op",
    "dtype_name": "dtype metadata, not an op",
    "is_floating": "dtype metadata, not an op",
    "is_reduced_float": "dtype metadata, not an op",
    "promote_types": "dtype metadata (exercised by every binary row's mixed-dtype samples)",
    "batch_norm_param_dtype": "dtype metadata for batch_norm's parameters",
    "describe": "printing helper",
    "operator<<": "printing helper",
    "contiguous_strides": "shape helper",
    "broadcast_shapes": "shape helper (exercised by every binary row's broadcast samples)",
    "conv_out_size": "shape arithmetic (exercised through conv2d's output shapes)",
    "conv_transpose_out_size": "shape arithmetic (exercised through conv_transpose2d's output shapes)",
    "pool_out_size": "shape arithmetic (exercised through the pooling rows' output shapes)",
    "upsample_out_size": "shape arithmetic (exercised through interpolate's output shapes)",
    "adaptive_start": "window arithmetic (exercised through the adaptive pooling rows)",
    "adaptive_end": "window arithmetic (exercised through the adaptive pooling rows)",
    "max_pool2d_windows_disjoint": "a kernel-selection predicate, not an op",
    "from_blob": "wraps caller memory; no tensor semantics to compare",
    "from_vector": "builds a tensor from a std::vector (the runner builds every input with it)",
    "to_vector": "reads a tensor into a std::vector (the runner reads every output with it)",
    "empty": "uninitialised values; shape and dtype only, covered by empty_like's row",
    "sgd_update_": "an optimizer step; tests/optim compares it with torch.optim.SGD",
    "device": "device metadata",
}

FUNC = re.compile(r"(?:^|[\s&*>])((?:operator\s*(?:[=!<>]=|[-+*/<>]|<<))|[A-Za-z_]\w*)\s*\(")


def _strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return text


def _includes(path):
    return re.findall(r'#include\s+"([^"]+)"', path.read_text())


def public_headers(root):
    root = Path(root)
    heads = [root / h for h in _includes(root / "tensor/ops.h")]
    heads += [root / h for h in _includes(root / "autograd/functions.h") if h.startswith("autograd/ops/")]
    heads.append(root / "nn/functional.h")
    return heads


def declared_functions(path):
    """Names of free functions declared at namespace scope in ddl or ddl::nn::functional."""
    text = _strip(path.read_text())
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    names, stack, i, stmt = set(), [], 0, ""
    while i < len(text):
        c = text[i]
        if c == "{":
            m = re.search(r"namespace\s+([\w:]+)\s*$", stmt)
            if m:
                stack.extend(m.group(1).split("::"))
                stack.append("{ns}")
            else:
                _take(stmt, stack, names)
                stack.append("{}")
            stmt = ""
        elif c == "}":
            top = stack.pop() if stack else None
            if top == "{ns}":
                while stack and stack[-1] not in ("{ns}", "{}"):
                    stack.pop()
            stmt = ""
        elif c == ";":
            _take(stmt, stack, names)
            stmt = ""
        else:
            stmt += c
        i += 1
    return names


def _take(stmt, stack, names):
    if "{}" in stack:
        return  # inside a class or function body
    ns = [s for s in stack if s != "{ns}"]
    if ns not in (["ddl"], ["ddl", "cuda"], ["ddl", "nn", "functional"]):
        return
    s = " ".join(stmt.split())
    if not s or re.match(r"(using|struct|class|enum|typedef|friend|return)\b", s) or "=" in s.split("(")[0] and "operator" not in s:
        return
    s = re.sub(r"^template\s*<[^>]*>\s*(requires\s*\([^)]*\)\s*)?", "", s)
    m = FUNC.search(" " + s)
    if m and m.group(1) not in ("DDL_DECLARE_KERNEL", "DDL_HOST_DEVICE", "requires", "decltype"):
        name = re.sub(r"\s+", "", m.group(1))
        if ns == ["ddl", "cuda"]:
            names.add(name)
        else:
            names.add(name)


def public_ops(root):
    ops = {}
    for h in public_headers(root):
        for n in declared_functions(h):
            ops.setdefault(n, str(Path(h).relative_to(root)))
    return ops


if __name__ == "__main__":
    import sys
    for n, h in sorted(public_ops(sys.argv[1] if len(sys.argv) > 1 else ".").items()):
        print(n, h, "(not an op)" if n in NOT_OPS else "")
