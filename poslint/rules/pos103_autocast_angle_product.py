import ast

from poslint.analysis import Prec, Role
from poslint.analysis.lattice import BF16_EXACT_UP_TO
from poslint.core.diagnostics import Fix
from poslint.fix.blocks import atom, enclosing_statement, replace, simple_name, torch_attr, wrap_in_block
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import (bands_above_one, distinct_positions, drawn_at_random, grid_extent,
                                        random_frequencies, relative_error, rounded_frequencies)

LOWERED_ON_CPU_TOO = frozenset({"matmul", "@", "mm", "bmm", "baddbmm", "addbmm", "addmm", "linear"})


class AutocastAngleProduct(Rule):
    """
    ## What it does
    Finds the RoPE angle product (positions times frequencies: the angles that cos and sin are
    taken of) computed with an op on CUDA
    autocast's low-precision list (`einsum`, `matmul`/`@`, `mm`, `bmm`, `baddbmm`, `addmm`, ...)
    in code that runs in the forward path, outside `torch.autocast(..., enabled=False)` (however
    `enabled` is given: by keyword or by position, as a name holding `False`, or in a guard made
    first and entered later).
    `torch.outer` and broadcasting `*` are not on the list; float64 operands are never lowered,
    and a product with one runs in float64: only a float32 operand beside it is rounded (a
    positions operand of unknown dtype is taken as 16-bit already, so autocast changes nothing;
    positions the grid keeps exact, such as one axis of an image's ids, lose nothing there);
    a dtype chosen by a test of the device type (`float32 if x.device.type == "mps" else
    float64`, or `torch.backends.mps.is_available()`) is the one CUDA and the CPU get;
    a product with an operand made on the CPU (a factory given no device, in a module that sets
    no default device; torch refuses to mix a CPU tensor with a CUDA one in a matrix product, so
    the other is on the CPU too) meets only CPU autocast, which lowers `matmul`/`@` but not `einsum`;
    code that only runs at construction is not under autocast, and neither is reported a hook
    that a base class from another module calls (nothing in the file shows whether it runs at
    construction or in forward). Lazy cache rebuilds reached from forward are reported.

    Where the code gives the range (a literal grid, a configuration class's default, a count bounded
    by an `assert`), the message
    counts the distinct positions of that grid; a grid of at most 257 positions is exact in
    bfloat16, so only the rounded frequencies and the bfloat16 product count, and it is not
    reported when they move its angles by less than 0.03 rad (with the code's own frequency table
    where its dim and base are literals or configuration defaults, else head dim 128 and base
    10000). An input of unknown range times frequencies drawn at random (learned Fourier
    features), or times Fourier bands that grow with the channel (octaves `2.0 ** arange(n)` of
    pixel coordinates in an einsum, made on the spot or held by the module), is reported with what
    16 bits do to each angle: autocast rounds both operands and the product, up to 1.2% of it in
    bfloat16.

    ## Why is this bad?
    Autocast runs these ops in 16 bits even when both inputs are float32: in float16 by default on
    CUDA, in bfloat16 on the CPU or where the autocast asks for it (the message counts
    bfloat16). The product of positions and frequencies then keeps only 897 distinct positions of
    8192 in bfloat16 (4,097 in float16), exactly as if the positions had been 16-bit. CPU
    autocast lowers `matmul` but not `einsum`, so a CPU test can pass while CUDA training
    collides.

    ## Example
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.dim = dim
            self.base = base

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=x.device).float() / self.dim))
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = t[:, None] @ inv_freq[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.dim = dim
            self.base = base

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=x.device).float() / self.dim))
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            with torch.autocast(device_type=x.device.type, enabled=False):
                freqs = t[:, None] @ inv_freq[None, :]  # float32, whatever autocast says outside
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Fix safety
    The fix puts the statement that computes the product under
    `with torch.autocast(device_type=<operand>.device.type, enabled=False):` and upcasts both
    operands with `.float()` (a tensor that is already 16-bit stays 16-bit inside the block).
    The device type comes from an operand, never a hard-coded string. It is offered only when
    cos/sin are cast to an explicit dtype afterwards, so the outputs keep their dtypes and the
    fix is safe (a cast of what they were added to, `(x + sinusoid).float()`, is the activations'
    and does not count); otherwise they would turn float32 under autocast, where the original's were
    16-bit, with no dtype in view to cast them back to, and there is no fix. There is no fix
    either for a float32 operand beside a float64 one (`.float()` would round the float64 one),
    when the product is not a statement of its own in a block, when no operand names its
    device, or for a layer's call (`self.proj(coords)`: `.float()` of the layer would convert its
    weights for good, and a module has no `.device`).
    """

    code = "POS103"
    name = "autocast-angle-product"
    summary = "RoPE angle product uses an op that autocast lowers to 16 bits"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device)
    with torch.autocast(device_type=x.device.type, enabled=False):
        freqs = inv_freq[None, :, None].float() @ steps[None, None, :].float()
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
        """
import torch
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device)
    freqs = torch.outer(steps.float(), inv_freq.float())
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device)
    freqs = inv_freq[None, :, None].float() @ steps[None, None, :].float()
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]

    def check(self, facts):
        for product in facts.rope_products():
            if not product.lowered_by_cuda_autocast:
                continue
            if not product.site.runtime or not product.site.phase_known or product.site.autocast_off:
                continue
            # (a matrix product's operands share a device: one made on the CPU puts it there)
            on_cpu = product.positions.on_cpu or product.factor.on_cpu
            if on_cpu and product.op not in LOWERED_ON_CPU_TOO:
                continue  # CUDA autocast leaves CPU tensors alone, and CPU autocast this op
            operands = {product.positions.prec, product.factor.prec}
            if Prec.F64 in operands and operands != {Prec.F64, Prec.F32}:
                continue  # autocast leaves float64 operands, and here rounds no float32 one
            extent, assumed = grid_extent(facts, product)
            if extent is not None and extent <= BF16_EXACT_UP_TO + 1:
                if product.factor.prec is Prec.F64:
                    continue  # exact positions beside float64 frequencies: the product is float64, nothing rounds
                # exact positions: only the frequencies and the product round
                consequence = rounded_frequencies(extent, "", product.factor, product_16bit=True,
                                                  divisor=product.op == "/")
                if consequence is None:
                    continue
                consequence += assumed
            elif not product.positions.has(Role.POSITIONS) and drawn_at_random(product.factor):
                # an input of unknown range: each angle moves relatively
                consequence = random_frequencies(product_too=True)
            elif not product.positions.has(Role.POSITIONS) and bands_above_one(product.factor):
                consequence = relative_error(False, "the frequencies are Fourier bands above one of an input "
                                                    "whose range the code does not give", product_too=True)
            else:
                consequence = distinct_positions(extent).replace(" in bfloat16", "")
            where = "CPU" if on_cpu else "CUDA and CPU" if product.op in LOWERED_ON_CPU_TOO else "CUDA"
            # CPU autocast's default is bfloat16, CUDA's float16; bfloat16 is counted, the worse.
            lowered = "bfloat16" if on_cpu else "16 bits (float16 by default on CUDA, or bfloat16; counted in bfloat16)"
            if Prec.F64 in operands:  # the fix's float32 operands would round the float64 one: none offered
                yield Finding(product.node, f"angle product uses {product.op}, whose float32 operand {where} "
                                            f"autocast rounds to {lowered} (the float64 one stays); {consequence}")
                continue
            yield Finding(product.node,
                          f"angle product uses {product.op}, which {where} autocast runs in {lowered} even for "
                          f"float32 inputs; {consequence}", autocast_fix(facts, product))


def autocast_fix(facts, product):
    # Positions cast to the module tensor's dtype (SAM's coordinates.to(self.gaussian.dtype)): the
    # product is meant in the module's dtype, which a float32 product would leave unless cos/sin
    # are cast back right there (a cast downstream, after other modules, is not known to come first).
    cast_to_module = product.positions.prec is Prec.CONVERTED and product.positions.origin is not None \
        and product.positions.origin.cast
    if product.op == "linear":
        return None  # the operand is a layer: .float() would convert its weights in place
    if not facts.cos_sin_cast_after(product, here_only=cast_to_module):
        return None  # under autocast the outputs would turn float32: no dtype to cast them back to
    statement = enclosing_statement(facts, product.node)
    device = simple_name(facts, product.positions_node) or simple_name(facts, product.factor_node)
    if statement is None or device is None:
        return None
    autocast, imports = torch_attr(facts, "autocast")
    upcasts = [replace(facts, operand, f"{atom(facts, operand)}.float()")
               for operand in (product.positions_node, product.factor_node) if not _is_float_call(operand)]
    header = f"with {autocast}(device_type={device}.device.type, enabled=False):"
    edit = wrap_in_block(facts, statement, header, upcasts)
    if edit is None:
        return None
    return Fix((edit,), "safe", "compute the angle product in float32 with autocast disabled", imports)


def _is_float_call(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "float" \
        and not node.args
