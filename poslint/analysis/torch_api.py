"""What poslint knows about torch, as data: dtypes and how operations move dtypes and roles,
what module conversions and autocast do, and how a module holds tensors. A new torch idiom is
one more entry in one of these tables; the interpreter (poslint.analysis.interpreter) and the
object model (poslint.analysis.object_model) read them."""

import math

from poslint.analysis.lattice import Prec

# --- dtypes ---------------------------------------------------------------------------------

DTYPES = {
    "torch.bfloat16": Prec.LOW, "torch.float16": Prec.LOW,
    "torch.float32": Prec.F32, "torch.float64": Prec.F64,
    "torch.int64": Prec.INT, "torch.int32": Prec.INT, "torch.int16": Prec.INT,
    "torch.int8": Prec.INT, "torch.uint8": Prec.INT, "torch.bool": Prec.INT,
}

# Python's types as dtypes: ``torch.arange(n, dtype=float)`` is float64.
PYTHON_TYPE_DTYPES = {"float": Prec.F64, "int": Prec.INT, "bool": Prec.INT}

COMPLEX_DTYPES = {"torch.complex64": Prec.F32, "torch.complex128": Prec.F64, "torch.complex32": Prec.LOW}

# Tensor-type names accepted by .type() and set_default_tensor_type().
TENSOR_TYPES = {"HalfTensor": Prec.LOW, "BFloat16Tensor": Prec.LOW, "FloatTensor": Prec.F32,
                "DoubleTensor": Prec.F64, "LongTensor": Prec.INT, "IntTensor": Prec.INT}

# The float16 spellings among those (the last dotted part): 11 significant bits, integers exact to 2048.
FLOAT16_NAMES = frozenset({"float16", "HalfTensor", "half"})

CAST_METHODS = {"float": Prec.F32, "double": Prec.F64, "half": Prec.LOW, "bfloat16": Prec.LOW,
                "long": Prec.INT, "int": Prec.INT, "short": Prec.INT, "bool": Prec.INT,
                "byte": Prec.INT, "char": Prec.INT}

# A module's own conversions that leave its floating tensors float32 or wider: ``m.float()``,
# ``m.double()``, ``m.to(torch.float32)``, ``m.to(device, dtype=torch.float32)``, ``m.type(torch.float64)``.
WIDENING_MODULE_CASTS = frozenset({"float", "double"})
WIDENING_MODULE_MOVES = frozenset({"to", "type"})

# --- operations -----------------------------------------------------------------------------

# Shape, device and layout operations: same dtype, same role.
PRESERVING = frozenset({
    "unsqueeze", "squeeze", "view", "reshape", "expand", "expand_as", "repeat", "transpose",
    "permute", "contiguous", "flatten", "unflatten", "clone", "detach", "t", "cuda", "cpu",
    "requires_grad_", "narrow", "flip", "roll", "repeat_interleave", "broadcast_to", "tile",
    "movedim", "swapaxes", "index_select", "gather", "masked_fill", "masked_fill_", "tril",
    "triu", "diagonal", "diag", "pin_memory", "share_memory_", "neg", "negative", "abs", "mul", "mul_",
    "add", "add_", "sub", "sub_", "div", "div_", "cumsum", "cumsum_", "rearrange", "repeat_kv",
    "pad", "to_dense", "coalesce", "type_as_", "select", "take_along_dim", "where", "fill_diagonal_",
    "triu_", "tril_", "view_as", "reshape_as", "squeeze_", "unsqueeze_", "sum", "__getitem__",
    "fill_", "fill", "zero_", "masked_scatter", "index_fill", "index_fill_",
})

# The preserving operations that also keep a tensor's values as they are (a tensor filled with
# one value still holds only that value after them); the others (sum, cumsum, fill_, where...) do not.
VALUE_KEEPING = frozenset({
    "unsqueeze", "squeeze", "view", "reshape", "expand", "expand_as", "repeat", "transpose", "permute",
    "contiguous", "flatten", "unflatten", "clone", "detach", "t", "cuda", "cpu", "requires_grad_", "narrow",
    "flip", "roll", "repeat_interleave", "broadcast_to", "tile", "movedim", "swapaxes", "index_select", "gather",
    "diagonal", "pin_memory", "to_dense", "view_as", "reshape_as", "squeeze_", "unsqueeze_", "__getitem__",
    "select", "take_along_dim",
})

# Methods whose arguments besides the tensor are sizes, dimensions or counts (never tensors):
# the result is where the tensor is, whatever the arguments are.
SIZE_ARGUMENTS = frozenset({
    "unsqueeze", "squeeze", "view", "reshape", "expand", "repeat", "transpose", "permute", "contiguous",
    "flatten", "unflatten", "t", "narrow", "flip", "roll", "broadcast_to", "tile", "movedim", "swapaxes",
    "diagonal", "diag", "squeeze_", "unsqueeze_", "select", "tril", "triu", "tril_", "triu_",
})

# The preserving operations that may put other values in (a sum, a fill): a bound on the
# values (``Value.extent``) does not hold after them.
BOUND_BREAKING = frozenset({
    "sum", "cumsum", "cumsum_", "where", "masked_fill", "masked_fill_", "masked_scatter", "fill_", "fill",
    "index_fill", "index_fill_", "fill_diagonal_",
})

# Reductions whose result bounds the magnitude of each entry it reduces (of non-negative counts,
# for a sum): a running count or coordinate divided by one lies within [-1, 1].
TOTALS = frozenset({"sum", "nansum", "max", "amax", "norm", "count_nonzero"})
# Reductions that, given no dim, reduce over every axis to a zero-dimensional tensor (which takes
# part in type promotion as a Python number does).
FULL_REDUCTIONS = frozenset({"sum", "nansum", "max", "min", "amax", "amin", "mean", "nanmean", "prod", "norm",
                             "count_nonzero", "std", "var", "median"})

# Methods after which a total still bounds what it totals, and a bounded value keeps its bound:
# a floor or a clip, casts, shape changes.
TOTAL_KEEPING = VALUE_KEEPING | {"clamp", "clip", "clamp_min", "float", "double", "to", "type_as"}
MAGNITUDE_KEEPING = TOTAL_KEEPING | {"clamp_", "half", "bfloat16", "type"}

# Inverse trigonometry (torch and numpy): an angle computed from coordinates or a complex number,
# a phase within [-pi, pi], where a 16-bit dtype moves it by under 0.008 rad.
INVERSE_TRIG = frozenset({"atan2", "arctan2", "atan", "arctan", "asin", "arcsin", "acos", "arccos", "angle"})

# Operations after which a value is no longer a position grid (a ramp, a mask, a count).
ROLE_KILLING = frozenset({
    "clamp", "clip", "clamp_", "sigmoid", "tanh", "softmax", "log_softmax", "max", "min", "amax",
    "amin", "argmax", "argmin", "mean", "prod", "numel", "size",
    "log", "log2", "log10", "sqrt", "rsqrt", "floor", "ceil", "round", "sign", "item",
    "tolist", "norm", "nonzero", "relu", "gelu", "silu",
}) | INVERSE_TRIG

# Operations whose result is a bool tensor: two values, 0 and 1, exact in every dtype (NaN flags,
# masks). What they test is not passed on.
PREDICATES = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit", "isclose", "isin",
    "logical_and", "logical_or", "logical_xor", "logical_not", "any", "all",
})

TRIG = frozenset({"cos", "sin"})

# Elementwise functions whose result is another quantity: what is passed to them does not leave
# as itself (``exp(-slope * distance)`` is a decay, not an additive bias).
TRANSFORMING = frozenset({"exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sigmoid", "tanh", "sqrt",
                          "rsqrt", "reciprocal"})

MATRIX_PRODUCTS = frozenset({"outer", "einsum", "matmul", "mm", "bmm", "baddbmm", "addbmm",
                             "addmm", "chain_matmul", "multi_dot", "mv", "linear"})

# The keyword names of the two operands of a matrix product (``torch.outer(input=t, vec2=inv_freq)``).
PRODUCT_KEYWORDS = {"outer": ("input", "vec2"), "ger": ("input", "vec2"), "matmul": ("input", "other"),
                    "mm": ("input", "mat2"), "bmm": ("input", "mat2"), "mv": ("input", "vec"),
                    "linear": ("input", "weight")}

CREATION_DEFAULT = frozenset({"ones", "zeros", "empty", "full", "rand", "randn", "linspace",
                              "logspace", "eye"})

# Functions that make a tensor from sizes, bounds or Python data: on the default device unless
# given ``device=``.
FACTORIES = CREATION_DEFAULT | {"arange", "range", "tensor", "as_tensor", "from_numpy"}
# Methods that move a tensor to an accelerator.
DEVICE_MOVES = frozenset({"cuda", "xpu", "npu", "mps", "hpu", "ipu"})

# Random draws: their values hold nothing positional.
RANDOM_CREATION = frozenset({"rand", "randn", "rand_like", "randn_like"})
# Tensor methods that fill their receiver with a random draw, in place (``empty(2).uniform_(a, b)``).
RANDOM_FILLS = frozenset({"uniform_", "normal_", "exponential_", "log_normal_", "cauchy_", "geometric_",
                          "random_"})

# torch.nn.init's functions, each filling its first argument in place with a random draw.
INIT_RANDOM_FILLS = frozenset({"torch.nn.init." + name for name in (
    "normal_", "trunc_normal_", "uniform_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_")})
UNIFORM_INIT_FILLS = frozenset({"torch.nn.init.uniform_"})

# ``t.new_zeros(...)`` and the like: a new tensor in ``t``'s dtype, or in the ``dtype=`` given.
NEW_TENSOR_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})

LIKE = frozenset({"ones_like", "zeros_like", "empty_like", "full_like", "rand_like", "randn_like"})

# In-place forms of elementwise operations, by the operation they apply (``t.exp_()`` is ``t.exp()``,
# written back into ``t``, in its dtype).
IN_PLACE_ELEMENTWISE = {"exp_": "exp", "exp2_": "exp2", "log_": "log", "sqrt_": "sqrt", "reciprocal_": "reciprocal",
                        "neg_": "neg", "pow_": "pow"}

CONCAT = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"})

# Module methods that hold a tensor under a name, and the storage they give it.
MODULE_REGISTRATIONS = {"register_buffer": "buffer", "register_parameter": "parameter"}
# The dicts behind them: ``self._buffers["inv_freq"] = t`` registers a buffer too.
MODULE_TENSOR_DICTS = {"_buffers": "buffer", "_parameters": "parameter"}
# Reading them back by name: ``self.get_buffer("inv_freq")``.
MODULE_LOOKUPS = frozenset({"get_buffer", "get_parameter"})

# Containers that, called, run their modules in order, each on what the one before returned.
SEQUENTIAL_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
# Containers that hold modules by index or by name, calling none of them: ``self.layers[i](x)``,
# ``for layer in self.layers``, ``self.nets["embed"](t)`` call the module held there.
# The base every torch module derives from.
TORCH_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
MODULE_LISTS = frozenset({"torch.nn.ModuleList", "torch.nn.modules.container.ModuleList"})
MODULE_DICTS = frozenset({"torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict"})
# Containers of parameters: what they hold (plain tensors too, which they wrap) are parameters of
# the module, which ``module.to()`` converts.
PARAMETER_CONTAINERS = frozenset({"torch.nn.ParameterList", "torch.nn.ParameterDict",
                                  "torch.nn.modules.container.ParameterList",
                                  "torch.nn.modules.container.ParameterDict"})
# A module whose call is ``F.linear(x, weight, bias)`` with a parameter it initialises at random.
LINEAR_MODULES = frozenset({"torch.nn.Linear", "torch.nn.modules.linear.Linear"})
# numpy's floating dtypes, as a ``dtype=`` of ``numpy.linspace`` names them.
NUMPY_FLOAT_PRECS = {"numpy.float64": Prec.F64, "numpy.double": Prec.F64, "numpy.float32": Prec.F32,
                     "numpy.single": Prec.F32, "numpy.float16": Prec.LOW, "numpy.half": Prec.LOW}
# Layers and the parameters they hold under fixed names (``nn.Embedding(n, d).weight``), which
# ``module.to()`` converts with the module that holds the layer.
LAYER_PARAMETERS = {
    "torch.nn.Linear": ("weight", "bias"), "torch.nn.modules.linear.Linear": ("weight", "bias"),
    "torch.nn.Bilinear": ("weight", "bias"), "torch.nn.Embedding": ("weight",), "torch.nn.EmbeddingBag": ("weight",),
    "torch.nn.Conv1d": ("weight", "bias"), "torch.nn.Conv2d": ("weight", "bias"), "torch.nn.Conv3d": ("weight", "bias"),
    "torch.nn.ConvTranspose1d": ("weight", "bias"), "torch.nn.ConvTranspose2d": ("weight", "bias"),
    "torch.nn.ConvTranspose3d": ("weight", "bias"), "torch.nn.LayerNorm": ("weight", "bias"),
    "torch.nn.GroupNorm": ("weight", "bias"), "torch.nn.RMSNorm": ("weight",),
    "torch.nn.BatchNorm1d": ("weight", "bias"), "torch.nn.BatchNorm2d": ("weight", "bias"),
    "torch.nn.BatchNorm3d": ("weight", "bias"),
}
# Modules whose call hands its input back, as far as precision and role go (dropout scales values
# during training only): what it is called on keeps what it was (a phase stays a phase).
VALUE_PRESERVING_MODULES = frozenset({"torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d",
                                      "torch.nn.Dropout3d", "torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout",
                                      "torch.nn.Identity"})

# FSDP2's ``fully_shard(module, mp_policy=MixedPrecisionPolicy(param_dtype=...))``: with a param
# dtype set and ``cast_forward_inputs`` left True (the default), every floating tensor argument of
# the sharded module's forward is cast to that dtype where the forward begins.
FULLY_SHARD = frozenset({"torch.distributed.fsdp.fully_shard", "torch.distributed._composable.fsdp.fully_shard",
                         "torch.distributed._composable.fsdp.fully_shard.fully_shard",
                         "torch.distributed.fsdp._fully_shard.fully_shard"})
MIXED_PRECISION_POLICIES = frozenset({"torch.distributed.fsdp.MixedPrecisionPolicy",
                                      "torch.distributed._composable.fsdp.MixedPrecisionPolicy",
                                      "torch.distributed.fsdp._fully_shard.MixedPrecisionPolicy"})

CONVERSION_HOOKS = frozenset({"_apply", "to", "half", "bfloat16", "float", "type"})
# What every ``nn.Module`` has without defining it (its public methods and attributes): a read of
# any other name that nothing defines raises AttributeError.
MODULE_MEMBERS = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile",
    "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer",
    "get_extra_state", "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia",
    "named_buffers", "named_children", "named_modules", "named_parameters", "parameters",
    "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter", "register_state_dict_post_hook",
    "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "set_submodule", "share_memory",
    "state_dict", "to", "to_empty", "train", "training", "type", "xpu", "zero_grad"})
# Calls that set an attribute whose name is an argument (the second for ``setattr``).
ATTRIBUTE_SETTERS = frozenset(MODULE_REGISTRATIONS) | {"setattr", "add_module", "register_module", "__setattr__"}

# nn.Module methods that return the module itself (``Fourier(n).to(dtype=torch.float32)``, ``.eval()``).
MODULE_RETURNING_SELF = frozenset({"to", "half", "bfloat16", "float", "double", "type", "cuda", "cpu", "xpu",
                                   "eval", "train", "requires_grad_", "apply", "to_empty", "zero_grad", "share_memory"})

# Methods that run while a model is built, never in its forward: the constructor, and the weight
# initialisation hooks that frameworks call once after it (transformers' post_init/_init_weights and
# init_weights, mmengine's BaseModule.init_weights, timm's init_weights), before any autocast region.
CONSTRUCTION_ROOTS = frozenset({"__init__", "__post_init__", "post_init", "reset_parameters", "_init_weights",
                                "init_weights", "__new__", "__setstate__"})

# Module constants that are Python floats, and their values (None: not a finite number).
PYTHON_FLOATS = {"math.pi": math.pi, "math.tau": math.tau, "math.e": math.e, "math.inf": None, "numpy.pi": math.pi,
                 "numpy.e": math.e, "torch.pi": math.pi}

# Calls whose first argument must be a complex tensor.
COMPLEX_INPUT_CALLS = frozenset({"view_as_real", "istft"})
# Calls whose tensor arguments are indices.
INDEXING_CALLS = frozenset({"embedding", "one_hot", "bincount", "gather", "index_select", "take_along_dim"})

# Attributes of a torch.device and of a dtype; any other attribute read makes a name a tensor.
DEVICE_ATTRIBUTES = frozenset({"type", "index"})

DTYPE_ATTRIBUTES = frozenset({"is_floating_point", "is_complex", "is_signed", "itemsize"})
# Parameter annotations that say what a parameter is.
ANNOTATION_KINDS = {"device": "device", "dtype": "dtype", "Tensor": "tensor", "FloatTensor": "tensor",
                    "LongTensor": "tensor"}

# Attributes under which transformers' and diffusers' configs, models and pipelines record the dtype
# the model was loaded in (``config.torch_dtype``): the activations' dtype, like a module's ``.dtype``.
LOAD_DTYPE_ATTRIBUTES = frozenset({"torch_dtype"})

# Class attributes of a model that name the submodules its loader keeps in float32 whatever dtype it
# loads in (transformers' dtype plan; the non-strict list only for float16 loads).
KEEP_FLOAT32_LISTS = frozenset({"_keep_in_fp32_modules_strict"})

# Calls that set the process-wide default dtype: torch's own, torchtune's context manager of the
# same name, and transformers' loader helpers that wrap it.
DEFAULT_DTYPE_SETTERS = frozenset({"set_default_dtype", "set_default_tensor_type", "_set_default_dtype",
                                   "_set_default_torch_dtype"})

# The positional parameters of the autocast context managers, for ``enabled`` and ``dtype`` passed
# without keywords (``torch.cuda.amp.autocast(False)``).
AUTOCAST_SIGNATURES = {
    "torch.autocast": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch.amp.autocast": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch.amp.autocast_mode.autocast": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch.cuda.amp.autocast": ("enabled", "dtype", "cache_enabled"),
    "torch.cpu.amp.autocast": ("enabled", "dtype", "cache_enabled"),
}

# Ops that CUDA autocast runs in 16 bits even for float32 inputs (PRECISION.md section 4).
CUDA_AUTOCAST_LOWERED = frozenset({
    "matmul", "@", "mm", "bmm", "baddbmm", "addbmm", "addmm", "addmv", "addr", "mv",
    "einsum", "linear", "chain_matmul", "multi_dot",
})

# Tensor attributes that do not depend on the values.
METADATA = frozenset({"dtype", "device", "shape", "ndim", "is_cuda", "layout"})

# Functions that ask what kind of object their argument is: the answer is settled when the
# interpreter knows the argument is a Python number, a tensor or a function of the project.
KIND_TESTS = {"torch.is_tensor": "tensor", "inspect.isfunction": "function"}

# Device types other than the two whose autocast and conversions the rules describe (CUDA and the
# CPU): a test that a tensor's device is one of these (``x.device.type != "mps"``) is settled as on
# CUDA or the CPU.
OTHER_DEVICE_TYPES = frozenset({"mps", "xla", "xpu", "npu", "hpu", "mtia", "meta", "ipu", "vulkan", "privateuseone"})
# Whether a backend of one of those types is present (``float32 if torch.backends.mps.is_available()
# else float64``): settled, likewise, as absent.
OTHER_DEVICE_AVAILABILITY = frozenset({"torch.backends.mps.is_available", "torch.backends.mps.is_built",
                                       "torch.mps.is_available", "torch.xpu.is_available", "torch.npu.is_available",
                                       "torch.mtia.is_available"})

# Matrix products that need both operands of one dtype (measured, torch 2.13: "expected m1 and m2 to
# have the same dtype"; tests/test_runtime_precision_doc.py); so does an einsum that sums over an axis
# (a product's ``one_dtype``), while outer and an einsum summing nothing promote.
SAME_DTYPE_PRODUCTS = frozenset({"@", "matmul", "mm", "bmm"})
# Products that raise on operands of two dtypes as well: those, and a linear layer's (``F.linear``,
# an ``nn.Linear`` called on float32 coordinates after its weight was converted).
ONE_DTYPE_PRODUCTS = SAME_DTYPE_PRODUCTS | {"linear"}
