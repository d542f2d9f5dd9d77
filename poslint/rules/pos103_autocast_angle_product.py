from poslint.analysis import Prec
from poslint.rules.base import Finding, Rule

LOWERED_ON_CPU_TOO = frozenset({"matmul", "@", "mm", "bmm", "baddbmm", "addbmm", "addmm", "linear"})


class AutocastAngleProduct(Rule):
    """
    ## What it does
    Finds the RoPE angle product (positions x frequencies) computed with an op on CUDA
    autocast's low-precision list (`einsum`, `matmul`/`@`, `mm`, `bmm`, `baddbmm`, `addmm`, ...)
    in code that runs in the forward path, outside `torch.autocast(..., enabled=False)`.
    `torch.outer` and broadcasting `*` are not on the list; float64 operands are never lowered;
    code that only runs at construction is not under autocast.

    ## Why is this bad?
    Autocast runs these ops in bfloat16 even when both inputs are float32. The product of
    positions and frequencies then keeps only 897 distinct positions of 8192, exactly as if the
    positions had been bfloat16. CPU autocast lowers `matmul` but not `einsum`, so a CPU test
    can pass while CUDA training collides.

    ## Example
    ```python
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
    ```

    ## Use instead
    ```python
    with torch.autocast(device_type=x.device.type, enabled=False):
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    ```

    ## Fix safety
    There is no automatic fix yet.
    """

    code = "POS103"
    name = "autocast-angle-product"
    summary = "RoPE angle product uses an op that autocast lowers to 16 bits"

    def check(self, facts):
        for product in facts.products:
            if product.kind != "rope" or not product.lowered_by_cuda_autocast:
                continue
            if not product.site.runtime or product.site.autocast_off:
                continue
            if product.positions.prec is Prec.F64 and product.factor.prec is Prec.F64:
                continue
            where = "CUDA and CPU" if product.op in LOWERED_ON_CPU_TOO else "CUDA"
            yield Finding(product.node,
                          f"angle product uses {product.op}, which {where} autocast runs in bfloat16 even for "
                          "float32 inputs; only 897 of 8192 positions stay distinct")
