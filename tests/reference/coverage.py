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
    "parallel_for_dynamic": "loop helper for kernels, not an op",
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
    return re.findall(r'#include\s+<ddl/([^>]+)>', path.read_text())


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


# --- methods -----------------------------------------------------------------------------------------------------
# The methods of Tensor (tensor/core/tensor.h) and Variable (autograd/variable.h) that are ops. One whose definition
# in METHOD_SOURCES is a single `return ddl::f(...)` (or `return f(...)`) forwards to f and is covered by f's
# row; the others are in METHOD_ROWS (the row that covers them), METHODS_WITHOUT_ROWS (ops that have no row
# yet: printed by the sweep, not failed) or NOT_OP_METHODS (why they are not ops). A new method in none of these
# fails the sweep with MISSING ROWS.
METHOD_SOURCES = ["tensor/core/tensor_methods.cpp", "autograd/variable_methods.cpp"]
METHOD_CLASSES = {"Tensor": "tensor/core/tensor.h", "Variable": "autograd/variable.h"}

# The same op as a row whose C++ call goes elsewhere (the method's own code, or a detail:: kernel).
METHOD_ROWS = {
    "argmax": "argmax",  # x.argmax(dim) forwards; x.argmax() is argmax of the flattened tensor
    "argmin": "argmin",
    "argsort": "argsort",  # Variable::argsort forwards to argsort of its data
    "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",  # Variable's forward the data
    "flatten": "x.flatten",
    "index": "index",
    "index_put_": "index_put_",
}
# Methods that are ops of their own (views, copies, in-place arithmetic), each with its row in rows_methods.cpp.
METHOD_ROWS.update({n: n for n in ("view", "reshape", "permute", "transpose", "t", "narrow", "select", "slice",
                                   "expand", "squeeze", "unsqueeze", "contiguous", "clone", "add_", "sub_", "mul_")})

METHOD_ROWS.update({n: n for n in ("div_", "copy_", "zero_", "fill_", "clamp_", "as_strided", "to", "max", "min")})

# Ops with no row of their own yet; the sweep prints them (none now).
METHODS_WITHOUT_ROWS = {}

NOT_OP_METHODS = {
    "defined": "metadata", "shape": "metadata", "strides": "metadata", "size": "metadata", "stride": "metadata",
    "dim": "metadata", "numel": "metadata", "dtype": "metadata", "device": "metadata", "is_contiguous": "metadata",
    "raw_data": "raw pointer", "data": "the underlying tensor or a typed pointer", "item": "reads one value",
    "storage": "metadata", "offset": "metadata", "nbytes": "metadata",
    "element_size": "metadata", "pin_memory": "host memory placement", "is_pinned": "metadata",
    "requires_grad": "autograd state", "requires_grad_": "autograd state", "is_leaf": "autograd state",
    "grad": "autograd state", "grad_fn": "autograd state", "detach": "autograd state", "name": "autograd state",
    "set_name": "autograd state", "backward": "runs the engine (every row's gradients use it)",
    "impl": "internal handle",
    "impl_ptr": "internal handle", "version": "autograd version counter", "bump_version": "autograd state",
    "set_grad": "autograd state", "set_data": "autograd state", "remove_hook": "autograd hook",
    "register_post_accumulate_grad_hook": "autograd hook", "shares_storage": "metadata",
    "zero_grad": "autograd state",
    "sizes": "metadata", "options": "metadata", "register_hook": "autograd hook", "retain_grad": "autograd state",
    "retains_grad": "autograd state",
}

METHOD = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:[\w:<>,*&]+\s+)+[*&]*(\w+)\s*\(")


def class_methods(root, cls, header):
    """Public member function names declared in `class cls` of header (constructors and operators left out)."""
    text = _strip((Path(root) / header).read_text())
    m = re.search(r"\bclass\s+" + cls + r"\s*\{", text)
    body, depth, i = "", 1, m.end()
    while depth:
        c = text[i]
        depth += c == "{"
        depth -= c == "}"
        body += c if depth == 1 or (depth == 2 and c == "{") else ("\n" if c == "\n" else "")
        i += 1
    body = body.split("private:")[0]
    names = set()
    for line in body.splitlines():
        mm = METHOD.match(line)
        if mm and mm.group(1) not in (cls, "operator") and not line.strip().startswith(("using", "return")):
            names.add(mm.group(1))
    return names


def forwards(root):
    """{(class, method): the free functions its definitions in METHOD_SOURCES return, None for one that does not
    forward (a method with several overloads forwards only if every overload does)}."""
    out = {}
    for src in METHOD_SOURCES:
        text = _strip((Path(root) / src).read_text())
        for m in re.finditer(r"(\w+)::(\w+)\([^)]*\)\s*const\s*\{\s*(return\s+(?:ddl::)?(\w+)\()?", text):
            out.setdefault((m.group(1), m.group(2)), set()).add(m.group(4))
    return out


def method_coverage(root, rows):
    """[(class, method, how)] for every public method; how is 'row NAME', 'forwards to NAME', 'no row: ...',
    'not an op: ...' or None (missing)."""
    fw, result = forwards(root), []
    for cls, header in METHOD_CLASSES.items():
        for name in sorted(class_methods(root, cls, header)):
            f = fw.get((cls, name), set())
            if f and all(x is not None and x in rows for x in f):
                how = "forwards to " + "/".join(sorted(f))
            elif name in METHOD_ROWS and METHOD_ROWS[name] in rows:
                how = "row " + METHOD_ROWS[name]
            elif name in NOT_OP_METHODS:
                how = "not an op: " + NOT_OP_METHODS[name]
            elif name in METHODS_WITHOUT_ROWS:
                how = "no row: " + METHODS_WITHOUT_ROWS[name]
            else:
                how = None
            result.append((cls, name, how))
    return result


if __name__ == "__main__":
    import sys
    args = [a for a in sys.argv[1:] if a != "--methods"]
    root = args[0] if args else "."
    if "--methods" in sys.argv:
        # assumes METHOD_ROWS' rows exist (the sweep checks that they do)
        for c, n, how in method_coverage(root, set(public_ops(root)) | set(METHOD_ROWS.values())):
            print(f"{c}::{n}", how or "MISSING")
    else:
        for n, h in sorted(public_ops(root).items()):
            print(n, h, "(not an op)" if n in NOT_OPS else "")
