"""The table of third-party helpers (poslint.analysis.library_summaries), used without reading
site-packages: each effect changes what the analysis concludes, and each entry names the source
it was checked against."""

from __future__ import annotations

import textwrap

import pytest

from poslint.analysis.library_summaries import LIBRARY, ROLE_WORDS
from poslint.engine.checker import check_text
from poslint.engine.prefilter import may_have_findings
from poslint.rules import all_rules

ROPE_INIT = """
import torch
from torch import nn
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS


class Rotary(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.rope_init_fn = ROPE_INIT_FUNCTIONS[config.rope_type]
        self.inv_freq, self.attention_scaling = self.rope_init_fn(config, device)

    def forward(self, x):
        t = torch.arange(x.shape[1], device=x.device, dtype={dtype})
        return torch.outer(t, self.inv_freq.to(x.device))
"""

EINOPS = """
import torch
from einops import {function}


def angles(seq_len, inv_freq):
    freqs = torch.outer(torch.arange(seq_len, dtype=torch.float32), 1.0 / 10000 ** (torch.arange(0, 64, 2) / 64))
    return {function}(freqs, "s d -> 1 s d").to(torch.bfloat16)
"""

FLASH = """
import torch
from flash_attn.layers.rotary import apply_rotary_emb


def rotate(q, seq_len):
    inv_freq = 1.0 / 10000 ** (torch.arange(0, 64, 2, dtype=torch.float32) / 64)
    freqs = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
    out = apply_rotary_emb(q, freqs.cos(), freqs.sin())
    return out.to({dtype})
"""


def codes(source: str, prefilter: bool = True):
    result = check_text(textwrap.dedent(source), "m.py", frozenset(all_rules()), prefilter=prefilter)
    assert not result.internal_errors
    return sorted({d.code for d in result.diagnostics})


def test_rope_init_functions_return_float32_frequencies():
    # Without the table the frequencies are an unknown call's result and no product is seen.
    assert codes(ROPE_INIT.format(dtype="x.dtype")) == ["POS101"]
    assert codes(ROPE_INIT.format(dtype="torch.float32")) == []


def test_files_that_name_a_role_giving_helper_pass_the_prefilter():
    assert may_have_findings(ROPE_INIT.format(dtype="x.dtype"))
    assert codes(ROPE_INIT.format(dtype="x.dtype"), prefilter=False) == codes(ROPE_INIT.format(dtype="x.dtype"))
    assert "rope_init_functions" in ROLE_WORDS


@pytest.mark.parametrize("function", ["rearrange", "repeat"])
def test_einops_keeps_the_dtype_and_the_role(function):
    # The angles stay angles through rearrange/repeat: their cast to bfloat16 is POS104.
    assert "POS104" in codes(EINOPS.format(function=function))


def test_flash_attn_applies_cos_sin_as_given_and_returns_the_input_dtype():
    # Its output is the rotated activations: casting them is not casting angles.
    assert codes(FLASH.format(dtype="torch.bfloat16")) == []


CAST = """
import torch
from typing import cast
from torch import nn


class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))

    def forward(self, seq_len):
        t = torch.arange(seq_len, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        t = {wrap}
        return torch.outer(t, self.inv_freq)
"""


def test_typing_cast_returns_its_value():
    # cast(T, t) is t at run time: the positions keep the buffer's dtype and their role.
    assert codes(CAST.format(wrap="cast(torch.Tensor, t)")) == codes(CAST.format(wrap="t")) == ["POS101", "POS102"]


ODE = """
import math
import torch
from torch import nn
from torchdiffeq import {solver}


class Embed(nn.Module):
    def forward(self, t):
        freqs = torch.exp(torch.arange(64, device=t.device).float() * -(math.log(10000) / 63))
        angles = 1000 * t[:, None] * freqs[None]
        return torch.cat((angles.sin(), angles.cos()), dim=-1)


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Embed()

    def sample(self, steps):
        grid = torch.linspace(0, 1, steps, dtype=torch.float32)
        return {solver}(lambda t, y: y + self.embed(t[None]), {state}, grid)
"""


@pytest.mark.parametrize("solver", ["odeint", "odeint_adjoint"])
def test_an_ode_solver_calls_its_function_on_times_in_the_state_dtype(solver):
    # The solver casts the times to the state's dtype before it calls the function.
    assert codes(ODE.format(solver=solver, state="torch.zeros(8, 128, dtype=torch.float16)")) == ["POS101"]
    assert codes(ODE.format(solver=solver, state="torch.zeros(8, 128, dtype=torch.float32)")) == []


def test_every_entry_says_what_source_it_was_checked_against():
    for qual, summary in LIBRARY.items():
        assert summary.effect in ("preserves", "returns-last", "applies-rotary", "rope-init", "rope-init-table",
                                  "multiplies", "contracts", "integrates", "alibi-builder", "embeds-timesteps",
                                  "timestep-embedder", "timesteps-embedder", "rotary-module", "either-argument", "attention-bias",
                                  "denoiser-model", "hf-rotary", "flash-rotary"), qual
        assert any(ch.isdigit() for ch in summary.checked) and ".py" in summary.checked, qual


def test_other_einops_functions_keep_torch_semantics():
    # einops.einsum is torch's einsum: an angle product, which CUDA autocast lowers (POS103).
    source = """
import torch
from einops import einsum


class Rotary(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))

    def forward(self, x):
        t = torch.arange(x.shape[1], device=x.device, dtype=torch.float32)
        freqs = einsum(t, self.inv_freq.to(x.device), "i, j -> i j")
        return freqs.cos(), freqs.sin()
"""
    assert "POS103" in codes(source)


# A registered frequency buffer whose dtype the positions take, times the positions by `{product}`.
BUFFER_ROTARY = """
import einx
import torch
from einops import einsum
from torch import nn


class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)))

    def forward(self, x):
        t = torch.arange(x.shape[1], device=x.device, dtype=self.inv_freq.dtype)
        freqs = {product}
        return freqs.cos(), freqs.sin()
"""


def product_codes(product: str):
    return codes(BUFFER_ROTARY.format(product=product))


def test_einops_einsum_takes_its_pattern_last():
    # einops.einsum(*tensors, pattern): the positions are its first operand, so their dtype (the
    # buffer's) is the finding, as with torch.einsum(pattern, *tensors).
    einops_form = product_codes('einsum(t, self.inv_freq, "i, j -> i j")')
    torch_form = product_codes('torch.einsum("i, j -> i j", t, self.inv_freq)')
    assert einops_form == torch_form and "POS101" in einops_form


def test_einx_multiply_and_dot_are_the_torch_products():
    # einx.multiply(pattern, a, b) is a broadcast `*`, einx.dot(pattern, a, b) an einsum: the same
    # findings as the torch spellings, the autocast one (POS103) only for the contraction.
    multiplied = product_codes('einx.multiply("i, j -> i j", t, self.inv_freq)')
    assert multiplied == product_codes("t[:, None] * self.inv_freq[None, :]")
    assert {"POS101", "POS102"} <= set(multiplied) and "POS103" not in multiplied
    contracted = product_codes('einx.dot("i, j -> i j", t, self.inv_freq)')
    assert contracted == product_codes('torch.einsum("i, j -> i j", t, self.inv_freq)')
    assert "POS103" in contracted


DENOISER = """
import torch
from {where} import {cls}


def step(latents, sigma, text):
    model = {cls}.{build}("checkpoint")
    time = sigma.to(text.dtype) * 1000
    return model(latents, {keyword}=time, encoder_hidden_states=text)
"""


@pytest.mark.parametrize("where, cls", [("diffusers", "FluxTransformer2DModel"),
                                        ("diffusers.models", "WanTransformer3DModel"),
                                        ("diffusers.models.unets.unet_2d_condition", "UNet2DConditionModel"),
                                        ("diffusers.models.transformers", "HiDreamImageTransformer2DModel")])
@pytest.mark.parametrize("build", ["from_pretrained", "from_config"])
def test_a_diffusers_model_embeds_the_time_it_is_given(where, cls, build):
    keyword = "timesteps" if cls.startswith("HiDream") else "timestep"
    source = DENOISER.format(where=where, cls=cls, build=build, keyword=keyword)
    assert may_have_findings(source)
    assert codes(source) == ["POS101"]
    assert codes(source.replace("sigma.to(text.dtype)", "sigma.float()")) == []
    # a keyword the model does not embed, and a class diffusers does not define
    assert codes(source.replace(f"{keyword}=time", "cross_attention_kwargs=time")) == []
    assert codes(source.replace(cls, "AutoencoderKL")) == []


@pytest.mark.parametrize("cls, call, found", [
    ("UNet2DConditionModel", "model(latents, time, text)", ["POS101"]),  # forward(sample, timestep, ...)
    ("UNet2DConditionModel", "model(latents, text, time)", []),
    ("FluxTransformer2DModel", "model(latents, text, None, time)", ["POS101"]),  # the fourth
    ("FluxTransformer2DModel", "model(latents, time)", []),
    ("UNet2DConditionModel", "model(*inputs, time)", []),  # where the time lands is unknown
])
def test_a_diffusers_model_takes_the_time_at_its_own_position(cls, call, found):
    source = DENOISER.format(where="diffusers", cls=cls, build="from_pretrained", keyword="timestep")
    source = source.replace("model(latents, timestep=time, encoder_hidden_states=text)", call)
    assert codes(source.replace("def step(latents, sigma, text):", "def step(latents, sigma, text, inputs):")) == found


CACHE_HOOK = """
import torch
from transformers.models.{module} import {base}


class Stretched({base}):
{forward}
    def _set_cos_sin_cache(self, seq_len, device, dtype):
        self.max_seq_len_cached = seq_len
        t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype) / 2
        freqs = torch.outer(t, self.inv_freq.float())
        self.register_buffer("cos_cached", freqs.cos().to(dtype), persistent=False)
"""
OWN_FORWARD = """
    def forward(self, x, seq_len=None):
        return self.cos_cached[:seq_len].to(x.dtype)
"""


@pytest.mark.parametrize("module, base", [("llama.modeling_llama", "LlamaRotaryEmbedding"),
                                          ("gpt_neox.modeling_gpt_neox", "GPTNeoXDynamicNTKScalingRotaryEmbedding"),
                                          ("qwen2.modeling_qwen2", "Qwen2RotaryEmbedding")])
def test_an_old_transformers_rotary_calls_its_cache_hook_from_forward(module, base):
    # Its forward rebuilds the cache after model.to(): positions in the converted buffer's dtype,
    # the buffer upcast at use; an own forward that replaces the base's leaves construction only.
    assert codes(CACHE_HOOK.format(module=module, base=base, forward="")) == ["POS101", "POS106"]
    assert codes(CACHE_HOOK.format(module=module, base=base, forward=OWN_FORWARD)) == []


def test_module_members_are_what_nn_module_defines():
    # A read of a name outside this table that nothing defines is taken to raise AttributeError.
    nn = pytest.importorskip("torch").nn  # (conftest fails a missing torch where CI=true)
    from poslint.analysis.torch_api import MODULE_MEMBERS, MODULE_RETURNING_SELF

    module = nn.Module()
    public = {name for name in set(dir(nn.Module)) | set(vars(module)) if not name.startswith("_")}
    assert public <= MODULE_MEMBERS
    assert MODULE_RETURNING_SELF <= MODULE_MEMBERS


def test_layer_parameters_are_what_the_torch_layers_hold():
    # ``layer.weight`` of these layers is read as a parameter that module.to() converts.
    import importlib

    nn = pytest.importorskip("torch").nn
    from poslint.analysis.torch_api import LAYER_PARAMETERS

    arguments = {"Linear": (4, 4), "Bilinear": (4, 4, 4), "Embedding": (4, 4), "EmbeddingBag": (4, 4),
                 "LayerNorm": (4,), "GroupNorm": (2, 4), "RMSNorm": (4,)}
    for qual, names in LAYER_PARAMETERS.items():
        where, name = qual.rsplit(".", 1)
        cls = getattr(importlib.import_module(where), name)
        assert issubclass(cls, nn.Module)
        layer = cls(*arguments.get(name, (4, 4, 3)))
        assert set(names) == {n for n, _ in layer.named_parameters()}, qual
