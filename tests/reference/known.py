# The reference sweep's deliberate differences (docs/reference_sweep.md, "Known differences"), by name: each
# (op, sample tag) tolerates only the kinds of disagreement listed, so anything else in the same case still fails.
# Each entry: (op, sample tag) -> (the kinds of disagreement tolerated for that case, the section of
# docs/reference_sweep.md that explains it).
DOC = "docs/reference_sweep.md#"
EINSUM = ("ddl raised, torch did not",), "docs/reference_sweep.md#einsum-forms-ddl-refuses"
LOSS_SHAPES = ("ddl raised, torch did not",), "docs/reference_sweep.md#regression-losses-need-equal-shapes"
AMAX_NAN = ("grad values",), "docs/reference_sweep.md#amax-and-amin-gradients-at-nan"
PAD = ("torch raised, ddl did not",), "docs/reference_sweep.md#reflect-and-replicate-padding-of-1-d-and-integer-inputs"
POW16 = ("output values", "grad values", "double-backward values"), DOC + "pow-of-float16-at-infinity"
ELLIPSES = ("ddl raised, torch did not",), DOC + "one-ellipsis-per-index"
ZERO_POOL = ("torch backward raised, ddl did not",), DOC + "adaptive-pooling-to-a-zero-size"
BN16 = ("output dtype",), DOC + "batch-norm-statistics-of-16-bit-parameters"
MIXED = ("torch backward raised, ddl did not",), DOC + "losses-of-mixed-float-dtypes"
SHAPES = ("ddl raised, torch did not",), DOC + "backward-helpers-check-shapes"
NLL_PROBS = ("ddl raised, torch did not",), DOC + "nll_loss_forward-takes-class-indices"
LOG1P_HUGE = ("output values",), DOC + "log1p-of-huge-values"
ATAN2_BOOL = ("torch backward raised, ddl did not",), DOC + "atan2-of-a-bool-and-a-float"
NORM16 = ("output values",), DOC + "16-bit-norms-and-std-in-float64"
STD16 = ("grad values", "double-backward values"), DOC + "16-bit-norms-and-std-in-float64"
PROD16 = ("double-backward values",), DOC + "16-bit-norms-and-std-in-float64"
NORM_DB = ("double-backward values",), DOC + "norm-double-backward-at-a-zero-norm"
DIV16 = ("grad values",), DOC + "the-float32-0-d-divisor-of-a-float16-quotient"
KNOWN = {
    ("log1p", "large f64"): LOG1P_HUGE,
    ("atan2", "mixed bool+f32"): ATAN2_BOOL,
    ("atan2", "mixed 0-d right bool+f32"): ATAN2_BOOL,
    ("pow", "special f16 exponent=0.5"): POW16,
    ("pow", "special f16 exponent=-0.5"): POW16,
    ("pow", "special f16 exponent=1.5"): POW16,
    ("index", "two ellipses"): ELLIPSES,
    ("index_put", "two ellipses"): ELLIPSES,
    ("index_put_", "two ellipses"): ELLIPSES,
    ("index_put_", "value two ellipses"): ELLIPSES,
    ("adaptive_avg_pool2d", "zero output"): ZERO_POOL,
    ("adaptive_max_pool2d", "zero output"): ZERO_POOL,
    ("adaptive_max_pool2d_with_indices", "zero output"): ZERO_POOL,
    ("adaptive_avg_pool1d", "zero output"): ZERO_POOL,
    ("adaptive_max_pool1d", "zero output"): ZERO_POOL,
    ("adaptive_max_pool1d_with_indices", "zero output"): ZERO_POOL,
    ("batch_norm", "eval bf16 all"): BN16,
    ("batch_norm", "train bf16 all"): BN16,
    ("mse_loss", "mixed dtypes"): MIXED,
    ("huber_loss", "mixed dtypes"): MIXED,
    ("huber_loss", "mixed dtypes delta=0.5"): MIXED,
    ("log_softmax_backward", "shape mismatch"): SHAPES,
    ("nll_loss_forward", "probability targets"): NLL_PROBS,
    ("nll_loss_backward", "through probability targets"): NLL_PROBS,
    ("einsum", "ellipsis"): EINSUM,
    ("einsum", "broadcast 1"): EINSUM,
    ("mse_loss", "broadcast"): LOSS_SHAPES,
    ("l1_loss", "broadcast"): LOSS_SHAPES,
    ("smooth_l1_loss", "broadcast"): LOSS_SHAPES,
    ("smooth_l1_loss", "broadcast beta=0.5"): LOSS_SHAPES,
    ("huber_loss", "broadcast"): LOSS_SHAPES,
    ("huber_loss", "broadcast delta=0.5"): LOSS_SHAPES,
    ("amax", "special f16"): AMAX_NAN,
    ("amax", "special f32"): AMAX_NAN,
    ("amax", "special f64"): AMAX_NAN,
    ("amin", "special f16"): AMAX_NAN,
    ("amin", "special f32"): AMAX_NAN,
    ("amin", "special f64"): AMAX_NAN,
    ("pad", "reflect 1-d"): PAD,
    ("pad", "replicate 1-d"): PAD,
    ("norm", "special f16 p=2.0"): NORM16,
    ("norm", "special f16 p=3.0"): NORM16,
    ("norm", "long f16 p=2.0"): NORM16,
    ("std", "special f16 correction=1"): STD16,
    ("prod", "special f16"): PROD16,
    ("div", "mixed 0-d right f16+f32"): DIV16,
    ("norm", "special f16 p=-1.0"): NORM_DB,
    ("norm", "special f32 p=-1.0"): NORM_DB,
    ("norm", "special f64 p=-1.0"): NORM_DB,
    ("norm", "special f64 p=0.5"): NORM_DB,
}
