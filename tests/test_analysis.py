"""Unit tests of the dtype-flow analysis, independent of any rule."""

from __future__ import annotations

import ast
import textwrap

import pytest

from poslint.analysis import Prec, Role, analyze
from poslint.analysis.lattice import UNKNOWN as UNKNOWN_VALUE
from poslint.analysis.lattice import Origin, Sort, Value, merge, tensor
from poslint.analysis.names import ImportResolver
from poslint.core.source import LineIndex


def facts_of(code: str):
    code = textwrap.dedent(code)
    return analyze(ast.parse(code), code, LineIndex(code))


def only_product(code: str):
    facts = facts_of(code)
    assert len({p.node.lineno for p in facts.products}) == 1, facts.products
    return facts.products[0]


# ---- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("imports, expr, expected", [
    ("import torch as T", "T.arange", "torch.arange"),
    ("from torch import arange, bfloat16", "bfloat16", "torch.bfloat16"),
    ("import torch", "torch.half", "torch.float16"),
    ("import torch", "torch.float", "torch.float32"),
    ("from torch import nn", "nn.Parameter", "torch.nn.Parameter"),
    ("import torch.nn.functional as F", "F.pad", "torch.nn.functional.pad"),
    ("import torch", "torch.cuda.amp.autocast", "torch.autocast"),
    ("import numpy as np", "torch.arange", None),
])
def test_import_resolution(imports, expr, expected):
    tree = ast.parse(imports)
    assert ImportResolver(tree).qualname(ast.parse(expr, mode="eval").body) == expected


# ---- lattice -------------------------------------------------------------------------------


def test_merge_keeps_the_precision_that_may_lose_information():
    low = tensor(Prec.LOW, Origin.at(ast.Pass(), "explicit torch.bfloat16", Prec.LOW))
    f32 = tensor(Prec.F32)
    assert merge(low, f32).prec is Prec.LOW
    assert merge(f32, low).prec is Prec.LOW
    assert merge(tensor(Prec.INT), f32).prec is Prec.F32


def test_merge_with_an_untyped_value_keeps_roles():
    listed = Value(sort=Sort.OTHER, roles=frozenset({Role.SLOPES}))
    assert merge(Value(sort=Sort.TUPLE), listed).has(Role.SLOPES)


def test_lost_precision_follows_upcasts():
    origin = Origin.at(ast.Pass(), "buffer 'inv_freq'", Prec.CONVERTED)
    upcast = tensor(Prec.F32, rounded=origin)
    assert upcast.lost_precision() is origin
    assert tensor(Prec.F32).lost_precision() is None


# ---- transfer rules and promotion -----------------------------------------------------------


@pytest.mark.parametrize("positions, prec", [
    ("torch.arange(n)", Prec.INT),
    ("torch.arange(n).float()", Prec.F32),
    ("torch.arange(n, dtype=torch.int64).float()", Prec.F32),
    ("torch.arange(n, dtype=torch.bfloat16)", Prec.LOW),
    ("torch.arange(n, dtype=torch.half)", Prec.LOW),
    ("torch.arange(n).half()", Prec.LOW),
    ("torch.arange(n).to(torch.float16)", Prec.LOW),
    ("torch.arange(n).to(device=x.device, dtype=x.dtype)", Prec.ACTIVATION),
    ("torch.arange(n, device=x.device).type_as(x)", Prec.ACTIVATION),
    ("torch.arange(x.shape[-2]).to(x)", Prec.ACTIVATION),  # x is used as a tensor: .to(x) follows its dtype
    ("torch.arange(n).to(x.device)", Prec.INT),
    ("torch.arange(n, device=x).to(x)", Prec.INT),  # x is passed as a device: .to(x) only moves
    ("torch.arange(n).to(n)", Prec.UNKNOWN),  # nothing tells what n is
    ("torch.arange(0.0, n)", Prec.DEFAULT),
    ("torch.arange(n) / 2", Prec.DEFAULT),
    ("torch.arange(n) * 1.0", Prec.DEFAULT),
    ("torch.arange(n) // 2", Prec.INT),
    ("torch.linspace(0, n, n)", Prec.DEFAULT),
    ("torch.arange(n).double()", Prec.F64),
    ("torch.arange(n).type(torch.bfloat16)", Prec.LOW),
])
def test_position_precision(positions, prec):
    product = only_product(f"""
        import torch
        def rope(x, n, inv_freq_base=10000.0):
            inv_freq = 1.0 / (inv_freq_base ** (torch.arange(0, 64, 2).float() / 64))
            t = {positions}
            return torch.outer(t, inv_freq).cos()
    """)
    assert product.positions.prec is prec
    assert product.kind == "rope"


def test_integer_positions_with_float32_frequencies_promote_to_float32():
    product = only_product("""
        import torch
        def rope(n):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            return (torch.arange(n)[:, None] * inv_freq[None, :]).cos()
    """)
    assert product.result.prec is Prec.F32


def test_sixteen_bit_with_float32_promotes_and_remembers_the_rounding():
    product = only_product("""
        import torch
        def rope(n):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            t = torch.arange(n, dtype=torch.bfloat16).float()
            return torch.outer(t, inv_freq).cos()
    """)
    assert product.positions.prec is Prec.F32
    assert product.positions.lost_precision().prec is Prec.LOW


# ---- where values flow ----------------------------------------------------------------------


ROTARY = """
    import torch
    from torch import nn

    class Rotary(nn.Module):
        def __init__(self, dim, base=10000):
            super().__init__()
            inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
            {store}
            t = torch.arange(16, dtype=self.inv_freq.dtype)
            self.cos0 = torch.outer(t, self.inv_freq).cos()

        def cache(self, seq_len):
            t = torch.arange(seq_len, dtype=self.inv_freq.dtype)
            return torch.einsum("i,j->ij", t, self.inv_freq).cos()

        def forward(self, x):
            return self.cache(x.shape[-2])
"""


@pytest.mark.parametrize("store, runtime_prec", [
    ('self.register_buffer("inv_freq", inv_freq, persistent=False)', Prec.CONVERTED),
    ('self.register_buffer("inv_freq", inv_freq)', Prec.CONVERTED),
    ("self.inv_freq = nn.Parameter(inv_freq, requires_grad=False)", Prec.CONVERTED),
    ("self.inv_freq = inv_freq", Prec.F32),
])
def test_module_tensors_are_converted_only_after_construction(store, runtime_prec):
    facts = facts_of(ROTARY.format(store=store))
    by_function = {p.site.function: p for p in facts.products}
    construction = by_function["Rotary.__init__"]
    runtime = by_function["Rotary.cache"]
    assert not construction.site.runtime and construction.factor.prec is Prec.F32
    assert construction.positions.prec is Prec.F32
    assert runtime.site.runtime
    assert runtime.factor.prec is runtime_prec
    assert runtime.positions.prec is runtime_prec


def test_integer_buffers_are_not_converted():
    facts = facts_of("""
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("pos", torch.arange(128))
                self.inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            def forward(self, x):
                return torch.outer(self.pos.float(), self.inv_freq).cos()
    """)
    assert facts.products[0].positions.lost_precision() is None


def test_function_arguments_and_returns_flow_across_calls():
    facts = facts_of("""
        import torch
        def frequencies(dim, base=10000.0):
            return 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        def positions(n, dtype):
            return torch.arange(n, dtype=dtype)
        class M(torch.nn.Module):
            def forward(self, x):
                t = positions(x.shape[1], x.dtype)
                return torch.outer(t, frequencies(64)).cos()
    """)
    (product,) = {p.positions.prec: p for p in facts.products if p.positions.prec is Prec.ACTIVATION}.values()
    assert product.factor.has(Role.FREQS)
    assert product.positions.origin.node.lineno == 6  # inside positions(), where the dtype is applied


def test_tuple_unpacking_and_module_constants():
    facts = facts_of("""
        import torch
        HALF = torch.float16
        def build(n):
            inv = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            return torch.arange(n, dtype=HALF), inv
        def use(n):
            t, inv = build(n)
            return torch.outer(t, inv).sin()
    """)
    assert facts.products[0].positions.prec is Prec.LOW


def rotary_positions(parameter: str, lines: str):
    """The positions' precision of ``outer(steps, inv_freq)`` in a function of ``parameter`` whose
    ``lines`` bind ``steps``."""
    product = only_product(f"""
        import torch
        def angles({parameter}):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            {lines}
            table = torch.outer(steps, inv_freq)
            return table.cos(), table.sin()
    """)
    return product.positions.prec


@pytest.mark.parametrize("grids, prec", [
    ("list(map(lambda n: torch.linspace(-1.0, 1.0, n).to(torch.float16), sizes))", Prec.LOW),
    ("tuple(map(lambda n: torch.arange(n, dtype=torch.bfloat16), sizes))", Prec.LOW),
    ("list(map(lambda n: torch.arange(n, dtype=torch.float32), sizes))", Prec.F32),
])
def test_map_calls_its_function_on_the_elements(grids, prec):
    assert rotary_positions("sizes", f"steps = {grids}[0]") is prec


@pytest.mark.parametrize("unpacking, prec", [
    ("*_, length, dtype = *x.shape[:-1], x.dtype", Prec.ACTIVATION),
    ("first, *_, dtype = x.size(0), torch.float16, torch.float16, torch.float32", Prec.F32),
    ("dtype, *_ = torch.float32, *x.shape", Prec.F32),
])
def test_starred_unpacking_aligns_the_names_after_the_star_from_the_end(unpacking, prec):
    assert rotary_positions("x", f"{unpacking}; steps = torch.arange(x.shape[-2], dtype=dtype)") is prec


def test_methods_of_an_instance_attribute_are_followed():
    facts = facts_of("""
        import torch
        class Rotary(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            def cos_sin(self, n, dtype):
                t = torch.arange(n, dtype=dtype)
                return torch.outer(t, self.inv_freq).cos()
        class Attention(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rotary = Rotary()
            def forward(self, q):
                return self.rotary.cos_sin(q.shape[1], q.dtype)
    """)
    assert {p.positions.prec for p in facts.products} == {Prec.ACTIVATION}


# ---- context --------------------------------------------------------------------------------


@pytest.mark.parametrize("wrapper, off", [
    ('with torch.autocast(device_type="cuda", enabled=False):', True),
    ("with torch.cuda.amp.autocast(enabled=False):", True),
    ('with torch.amp.autocast("cuda", enabled=False):', True),
    ("with maybe_autocast(device_type=x.device.type, enabled=False):", True),
    ('with torch.autocast(device_type="cuda"):', False),
    ("with torch.no_grad():", False),
])
def test_autocast_regions(wrapper, off):
    product = only_product(f"""
        import torch
        def rope(x, inv_freq_col, n):
            inv_freq = inv_freq_col
            pos_row = torch.arange(n)[None, :]
            {wrapper}
                freqs = inv_freq.float() @ pos_row.float()
            return freqs.cos(), freqs.sin()
    """)
    assert product.site.autocast_off is off


def test_autocast_decorator_and_custom_fwd():
    facts = facts_of("""
        import torch
        @torch.autocast("cuda", enabled=False)
        def a(inv_freq, n):
            angles = torch.einsum("i,j->ij", torch.arange(n).float(), inv_freq)
            return angles.cos(), angles.sin()
        @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
        def b(inv_freq, n):
            angles = torch.einsum("i,j->ij", torch.arange(n).float(), inv_freq)
            return angles.cos(), angles.sin()
    """)
    assert facts.products and all(p.site.autocast_off for p in facts.products)


def test_construction_only_helpers_are_not_runtime():
    facts = facts_of("""
        import torch
        def precompute(dim, end):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
            return torch.einsum("i,j->ij", torch.arange(end).float(), inv_freq).cos()
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = precompute(64, 128)
    """)
    assert [p.site.runtime for p in facts.products] == [False]


def test_set_default_dtype_makes_the_default_explicit():
    facts = facts_of("""
        import torch
        def build(n):
            torch.set_default_dtype(torch.bfloat16)
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2) / 64))
            return torch.outer(torch.arange(n), inv_freq).cos()
    """)
    assert facts.products[0].factor.prec is Prec.LOW


# ---- recognising the mechanism without names ------------------------------------------------


def test_frequencies_are_recognised_by_shape_not_name():
    facts = facts_of("""
        import torch
        def f(a, n):
            w = 1.0 / (a ** (torch.arange(0, 64, 2).float() / 64))
            p = torch.arange(n, dtype=torch.float16)
            return torch.sin(p[:, None] * w[None, :])
    """)
    (product,) = facts.products
    assert product.kind == "rope" and product.positions.prec is Prec.LOW
    assert facts.rotary_products


def test_alibi_slopes_from_a_python_list():
    facts = facts_of("""
        import math, torch
        def slopes(n):
            start = 2 ** (-(2 ** -(math.log2(n) - 3)))
            return [start * start ** i for i in range(n)]
        def bias(n_heads, seq_len):
            m = torch.tensor(slopes(n_heads))
            return m[:, None] * torch.arange(seq_len)[None, :]
    """)
    (product,) = facts.products
    assert product.kind == "alibi" and product.positions.relative is False


@pytest.mark.parametrize("query, relative", [
    ("pos[:, None]", True),  # key - query on different axes
    ("pos[None, :]", False),  # the same axis: still absolute
    ("torch.diagonal(pos[None, :]).unsqueeze(-1)", False),  # the diagonal of a 1 x N view is one element
])
def test_relative_alibi_distances(query, relative):
    facts = facts_of(f"""
        import torch
        def bias(seq_len, n_heads=8):
            m = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
            pos = torch.arange(seq_len)
            distance = pos[None, :] - {query}
            return m[:, None, None] * distance[None]
    """)
    (product,) = facts.products
    assert product.positions.relative is relative


def test_geometric_sequences_that_are_not_multiplied_by_positions_are_silent():
    facts = facts_of("""
        import torch
        def decay(steps, gamma=0.5):
            return gamma ** torch.arange(steps)
    """)
    assert not facts.products


def test_overrides_called_from_a_base_constructor_are_construction():
    facts = facts_of("""
        import torch
        class Base(torch.nn.Module):
            def __init__(self, dim=64):
                super().__init__()
                self.dim = dim
                self.cache = self._cache(128)
            def _cache(self, n):
                inv_freq = 1.0 / (10000 ** (torch.arange(0, self.dim, 2).float() / self.dim))
                return torch.einsum("i,j->ij", torch.arange(n).float(), inv_freq).cos()
        class Scaled(Base):
            def _cache(self, n):
                inv_freq = 1.0 / (10000 ** (torch.arange(0, self.dim, 2).float() / self.dim))
                return torch.einsum("i,j->ij", torch.arange(n).float() / 2, inv_freq).cos()
    """)
    assert len(facts.products) == 2
    assert not any(p.site.runtime for p in facts.products)


@pytest.mark.parametrize("guard", [
    "if dtype in (torch.float16, torch.bfloat16):",
    "if torch.finfo(dtype).bits < 32:",
])
def test_a_guard_that_upcasts_16_bit_dtypes(guard):
    facts = facts_of(f"""
        import torch
        def grid(n, dtype=None):
            if dtype is None:
                dtype = torch.get_default_dtype()
            {guard}
                dtype = torch.float32
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            return torch.outer(torch.arange(n, dtype=dtype), inv_freq).cos()
    """)
    assert facts.products[0].positions.prec is Prec.F32


def test_a_guard_that_returns_float32_for_16_bit_dtypes():
    facts = facts_of("""
        import torch
        def buffer_dtype(dtype):
            if dtype is None:
                dtype = torch.get_default_dtype()
            if dtype.is_floating_point and torch.finfo(dtype).bits < 32:
                return torch.float32
            return dtype
        def grid(n, dtype=None):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            return torch.outer(torch.arange(n, dtype=buffer_dtype(dtype)), inv_freq).cos()
    """)
    assert facts.products[0].positions.lost_precision() is None


def test_a_guard_for_one_16_bit_dtype_does_not_clear_the_other():
    facts = facts_of("""
        import torch
        def grid(x, inv_freq):
            dtype = x.dtype
            if dtype == torch.float16:
                return None
            angles = torch.outer(torch.arange(x.shape[0], dtype=dtype), inv_freq.float())
            return angles.cos(), angles.sin()
    """)
    assert facts.products[0].positions.prec is Prec.ACTIVATION


@pytest.mark.parametrize("body, prec", [
    ("return torch.arange(n, dtype=dtype)", Prec.ACTIVATION),  # a dtype parameter nobody here binds
    ("return torch.arange(n).to(dtype)", Prec.UNKNOWN),  # a device, a dtype or a tensor: nothing tells
    ("w = torch.zeros(1, dtype=dtype)\n            return torch.arange(n).to(dtype)", Prec.ACTIVATION),
    ("return torch.arange(n, dtype=None)", Prec.INT),
    ("d = helper() if dtype is None else dtype\n            return torch.arange(n, dtype=d)", Prec.UNKNOWN),
])
def test_unbound_dtype_parameters(body, prec):
    facts = facts_of(f"""
        import torch
        from elsewhere import helper
        def positions(n, dtype):
            {body}
        def angles(n, dtype):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
            return torch.outer(positions(n, dtype), inv_freq).cos()
    """)
    assert facts.products[0].positions.prec is prec


@pytest.mark.parametrize("grid, relative", [
    ("torch.arange(n)[None, :].expand(n, n)", True),  # a full [S, S] grid: minus its diagonal is key - query
    ("torch.arange(n)[None, :]", False),  # 1 x N: its "diagonal" is the first key, still absolute
])
def test_subtracting_the_query_bias(grid, relative):
    facts = facts_of(f"""
        import torch
        def bias(n, dtype, heads=8):
            m = torch.pow(2.0, -8.0 / heads * torch.arange(1, heads + 1, dtype=torch.float32))
            b = m[:, None, None] * {grid}
            return (b - b.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)).to(dtype)
    """)
    (cast,) = facts.casts
    assert cast.before.relative is relative


def test_adding_a_square_mask_makes_a_bias_full():
    facts = facts_of("""
        import torch
        def bias(n, dtype, heads=8):
            m = torch.pow(2.0, -8.0 / heads * torch.arange(1, heads + 1, dtype=torch.float32))
            mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
            return (mask[None] + m[:, None, None] * torch.arange(n)[None, None, :]).to(dtype)
    """)
    (cast,) = facts.casts
    assert cast.before.thin is False and cast.before.relative is False


def test_no_torch_alias_is_a_dotted_prefix_of_another():
    """``canonical`` stops at the first alias that is a prefix of the name: it needs this."""
    from poslint.analysis.names import CANONICAL, canonical

    for alias in CANONICAL:
        assert not any(other.startswith(alias + ".") for other in CANONICAL), alias
        assert canonical(alias + ".x") == CANONICAL[alias] + ".x"
    assert canonical("torch.halfway") == "torch.halfway"
    assert canonical("numpy.half") == "numpy.half"


def test_values_copied_with_changes_compare_and_hash_by_their_fields():
    import pickle

    value = tensor(Prec.F32, roles=frozenset({Role.POSITIONS}))
    hash(value)  # cached on the object
    lowered = value.with_(prec=Prec.LOW)
    assert lowered.prec is Prec.LOW and value.prec is Prec.F32 and lowered != value
    assert value.with_() == value and hash(value.with_()) == hash(value)
    assert lowered.with_(prec=Prec.F32) == value and hash(lowered.with_(prec=Prec.F32)) == hash(value)
    again = pickle.loads(pickle.dumps(lowered))  # another process: its own hash, not this one's
    assert again == lowered and "_poslint_hash" not in again.__dict__
    with pytest.raises(TypeError):
        value.with_(precision=Prec.LOW)


def test_a_class_mro_is_kept_only_once_its_bases_are_final():
    tree = ast.parse(textwrap.dedent("""
        class A: pass
        class B(A): pass
        class C(B): pass
    """))
    from poslint.analysis.object_model import ModuleModel

    model = ModuleModel(tree, ImportResolver(tree), {"A", "B", "C"})
    a, b, c = (model.classes[n] for n in "ABC")
    assert [k.name for k in c.mro()] == ["C", "B", "A"] and c.mro() == c.mro()
    late = type(c)(c.node, "D", ["C"])  # bases not set yet: nothing is kept
    assert late.mro() == (late,) and late._bases_mro is None
    late.bases = [c]
    assert [k.name for k in late.mro()] == ["D", "C", "B", "A"]


def test_values_are_made_from_keywords_with_the_field_defaults():
    from dataclasses import MISSING, fields

    assert all(f.default is not MISSING for f in fields(Value))  # what Value's fast __init__ needs
    made = Value(sort=Sort.TENSOR, prec=Prec.F32)
    assert made == tensor(Prec.F32) and made.roles == frozenset() and made.payload is None
    assert Value() == UNKNOWN_VALUE
    with pytest.raises(TypeError):
        Value(sorts=Sort.TENSOR)


@pytest.mark.parametrize("positions, exact", [
    ("(torch.isnan(x) * 2.0 + torch.isposinf(x) * 4.0 - torch.isneginf(x) * 4.0).to(x.dtype)", True),
    ("(x > 0).to(x.dtype)", True),  # a bool tensor: 0 or 1
    ("(torch.arange(17) * 16).to(x.dtype)", True),  # up to 256
    ("(torch.arange(18) * 16).to(x.dtype)", False),  # 272: past what bfloat16 holds exactly
    ("(torch.isnan(x) * 200.0 + torch.isinf(x) * 100.0).to(x.dtype)", False),
    ("(torch.isnan(x) * 0.5).to(x.dtype)", False),  # not whole
    ("torch.isfinite(x).sum(-1).to(x.dtype)", False),  # a count of flags: up to the length
    ("torch.isfinite(x).cumsum(-1).to(x.dtype)", False),
    ("torch.isnan(x).float().sqrt().to(x.dtype)", False),
    ("torch.isnan(x).masked_fill(x < 0, 1000).to(x.dtype)", False),
])
def test_casts_of_small_whole_numbers_are_exact(positions, exact):
    product = only_product(f"""
        import torch
        def rope(x):
            inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 64, 2).float() / 64))
            t = {positions}
            return (t[..., None] * inv_freq).cos()
    """)
    assert product.positions.origin.exact is exact  # the cast's
    if exact:  # and the default dtype that ``isnan(x) * 2.0`` takes, where there is one
        assert all(origin.exact for origin in product.positions.precision_losses())


@pytest.mark.parametrize("uses, prec", [
    ("hits = ids == token", Prec.INT),
    ("hits = ids[0] == token", Prec.INT),  # a part of the ids, compared with a token
    ("for b, row in enumerate(ids):\n                hits = row == token", Prec.INT),
    ("for row in ids:\n                hits = row[1:] == token", Prec.INT),
    ("row = ids[0]\n            hits = row == token", Prec.INT),
    ("hits = ids.sum()", Prec.ACTIVATION),  # nothing says they are integers
    ("for b, row in enumerate(ids):\n                hits = row > 0.5", Prec.ACTIVATION),
])
def test_a_dtype_of_tensors_used_as_token_ids_is_an_integer_dtype(uses, prec):
    product = only_product(f"""
        import torch
        def rope(ids, token):
            {uses}
            t = torch.arange(ids.shape[-1], dtype=ids.dtype)
            inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 64, 2).float() / 64))
            return torch.outer(t, inv_freq).cos()
    """)
    assert product.positions.prec is prec
