import ast

from poslint.analysis import Prec, Role
from poslint.core.diagnostics import Fix
from poslint.fix.blocks import atom, replace
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import drawn_at_random, random_frequencies

# The matmul-family ops that run as a float32 GEMM, which TF32 (or "medium"'s bfloat16) rounds.
# einsum is not one for an angle product: with no summed index torch computes it as a broadcast
# multiply (aten.mul), on every device; mv/addmv are GEMVs and addr an elementwise kernel.
GEMM_OPS = frozenset({"@", "matmul", "mm", "bmm", "baddbmm", "addbmm", "addmm", "linear", "chain_matmul",
                      "multi_dot"})
# Ops with two operands whose product, with an inner dimension of 1, is the broadcast product.
BINARY_GEMMS = frozenset({"@", "matmul", "mm", "bmm"})


class Tf32AngleProduct(Rule):
    """
    ## What it does
    Finds the RoPE angle product (positions x frequencies) computed as a matrix product (`@`,
    `matmul`, `mm`, `bmm`, `baddbmm`, `addmm`, `linear`, ...) in a project that lets float32
    matmuls run at reduced precision: some linted file sets
    `torch.backends.cuda.matmul.allow_tf32 = True`,
    `torch.set_float32_matmul_precision("high")` (or `"medium"`), or a matmul
    `fp32_precision` of `"tf32"`/`"bf16"` (`torch.backends.fp32_precision`,
    `torch.backends.cuda.matmul.fp32_precision`). Inside `autocast(enabled=False)` too.

    Where no linted file sets it (the setting lives in a launcher, a framework default or the
    `NVIDIA_TF32_OVERRIDE` environment variable), the rule reports only with
    `assume-tf32 = true` in the configuration or `--assume-tf32`. A setting counts for the files
    of the run that its process runs: those its file imports, and those under the deepest folder
    that holds its file and them (`train.py` beside `model.py`, `pkg/bin/train.py` importing
    `pkg.register`); a helper that sets it counts where it is imported. One model's loader in a
    multi-model server does not reach the other models, a model (an `nn.Module`) that sets it
    reaches only its file and what that imports, and a trainer that imports its models reaches
    those models and what they import. A file linted alone (from an editor,
    flake8 or stdin) counts only its own settings. A setting in a test
    (`test_*.py`, `*_test.py`, `conftest.py`, a `tests` folder) does not count for other files:
    it holds while pytest runs that test.

    A product of tensors made on the CPU (factories given no device, in a project that sets no
    default device) is not reported: TF32 applies to CUDA matmuls only.

    `einsum` is not reported: an outer product written as `einsum("i,j->ij", ...)` sums over no
    index, and torch computes it as a broadcast multiply, not a GEMM. An input of unknown range
    times frequencies drawn at random (learned Fourier features) is reported with what TF32's 11
    significant bits do to each angle: 0.05% of it.

    ## Why is this bad?
    TF32 keeps 10 explicit mantissa bits, so only integers up to 2048 are exact; a float32
    matmul with TF32 enabled rounds both operands to that format before multiplying. Positions
    above 2048 then round to multiples of 2, 4, 8, ... (half of 8192 positions share their
    angles with a neighbour) and the frequencies carry a relative error of up to 2**-11, an angle
    error of about 4 rad at position 8191. `autocast(enabled=False)` does not help: TF32 is not
    autocast, it applies to every float32 matmul.

    ## Example
    ```python
    import torch
    from torch import nn


    def configure_training():
        torch.backends.cuda.matmul.allow_tf32 = True  # often in train.py, another linted file


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.dim = dim
            self.base = base

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=x.device).float() / self.dim))
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            with torch.autocast(device_type=x.device.type, enabled=False):
                freqs = t[:, None] @ inv_freq[None, :]  # a GEMM: TF32 rounds t and inv_freq
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    def configure_training():
        torch.backends.cuda.matmul.allow_tf32 = True


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.dim = dim
            self.base = base

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=x.device).float() / self.dim))
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = t[:, None] * inv_freq[None, :]  # broadcast: not a GEMM, the same float32 values
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```
    (or `torch.outer(positions, inv_freq)` for one-dimensional operands). A broadcast product
    is not a GEMM: neither TF32 nor autocast touches it, and in float32 its values are
    bit-identical to those of the matmul, which sums one product per entry.

    ## Fix safety
    The fix replaces `a @ b`, `torch.matmul(a, b)`, `torch.mm(a, b)` or `torch.bmm(a, b)` (and
    the method forms) with `a * b`. That is the same tensor only when the inner dimension is 1.
    The fix is safe when the analysis shows it: the positions are an index grid of size 1 in
    every dimension but the one that varies, and that one is not the inner dimension. Otherwise
    (positions passed in as `position_ids`) the fix is unsafe: an operand of another shape would
    broadcast differently instead of failing. There is no fix for `baddbmm`, `addmm`, `linear`
    and the like, nor for an input times frequencies drawn at random (learned Fourier features:
    a projection matrix that sums over the input's coordinates).
    """

    code = "POS107"
    name = "tf32-angle-product"
    summary = "RoPE angle product is a float32 matmul that TF32 rounds to 10 mantissa bits"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
torch.backends.cuda.matmul.allow_tf32 = True
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32)
    freqs = inv_freq[None, :].float() * steps[:, None]
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
        """
import torch
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32)
    with torch.autocast(device_type=x.device.type, enabled=False):
        freqs = inv_freq[None, :, None].float() @ steps[None, None, :]
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
torch.set_float32_matmul_precision("high")
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32)
    with torch.autocast(device_type=x.device.type, enabled=False):
        freqs = inv_freq[None, :, None].float() @ steps[None, None, :]
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]

    def check(self, facts):
        reason = facts.reduced_matmul_precision
        if reason is None:
            return
        for product in facts.rope_products():
            if product.op not in GEMM_OPS:
                continue
            if product.positions.prec is Prec.F64 or product.factor.prec is Prec.F64:
                continue  # TF32 rounds float32 matmuls only
            if product.positions.on_cpu or product.factor.on_cpu:
                continue  # and CUDA's only: a matrix product's operands share a device, here the CPU
            # an input of unknown range times frequencies drawn at random: each angle moves relatively
            # (TF32 keeps float16's 11 significant bits)
            consequence = random_frequencies(float16=True) if not product.positions.has(Role.POSITIONS) \
                and drawn_at_random(product.factor) else "positions above 2048 are no longer exact"
            yield Finding(product.node,
                          f"angle product uses {product.op}, a float32 matmul that TF32 rounds to 10 mantissa bits "
                          f"({reason}): {consequence}", _elementwise_fix(facts, product))


def _operands(node):
    """The two operands of ``a @ b``, ``torch.matmul(a, b)`` or ``a.matmul(b)``, in order."""
    if isinstance(node, ast.BinOp):
        return node.left, node.right
    if isinstance(node, ast.Call) and not node.keywords:
        if len(node.args) == 2:
            return node.args[0], node.args[1]
        if len(node.args) == 1 and isinstance(node.func, ast.Attribute):
            return node.func.value, node.args[0]
    return None


def _inner_dimension_is_one(product, left) -> bool:
    """Whether the positions grid shows size 1 on the inner (summed) dimension: it is thin (size
    1 everywhere but its varying axis) and varies along its own free axis (-2 on the left, -1 on
    the right)."""
    positions = product.positions
    if not positions.thin or positions.ndim is None or positions.ndim < 2:
        return False
    return positions.axis == (-2 if product.positions_node is left else -1)


def _elementwise_fix(facts, product):
    if product.op not in BINARY_GEMMS or (not product.positions.has(Role.POSITIONS) and drawn_at_random(product.factor)):
        return None  # an input times a random projection matrix: it sums over the input's coordinates
    operands = _operands(product.node)
    if operands is None or not {id(product.positions_node), id(product.factor_node)} <= set(map(id, operands)):
        return None
    left, right = operands
    text = f"{atom(facts, left)} * {atom(facts, right)}"
    if not isinstance(product.node, ast.BinOp):
        text = f"({text})"  # a call binds tighter than *: `torch.matmul(a, b).mT` must stay one operand
    safety = "safe" if _inner_dimension_is_one(product, left) else "unsafe"
    return Fix((replace(facts, product.node, text),), safety,
               "compute the angle product as a broadcast product, which is not a GEMM")
