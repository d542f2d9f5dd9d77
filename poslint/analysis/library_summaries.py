"""What widely used third-party helpers do to dtypes and roles, as data, so that their use is
understood without reading site-packages (which poslint never does). Each entry says which
version of the library's source it was checked against.

Effects:

* ``preserves``: returns its first argument's dtype and role (shape and layout operations); the
  pattern of ``rearrange``/``repeat`` on a 1-D tensor says along which axis its values lie, so that a
  difference of two such grids is read as relative or not, as with indexing;
* ``returns-last``: returns its last positional argument unchanged (``typing.cast(T, value)``);
* ``attention-bias``: ``(bias)``: an attention mask object that adds ``bias`` to the scores (xformers'
  ``LowerTriangularMaskWithTensorBias``);
* ``either-argument``: ``(value, fallback)``: returns one of its two arguments (``default(val, d)``:
  ``val`` unless it is None);
* ``applies-rotary``: rotates its first argument by the cos/sin tables it is given, as given
  (no recomputation, no cast of the tables): returns a tensor of the first argument's dtype,
  with no positional role;
* ``rope-init``: returns ``(inv_freq, attention_factor)``: float32 RoPE frequencies and a
  Python float;
* ``rope-init-table``: a mapping whose values are ``rope-init`` functions;
* ``multiplies``: ``(pattern, a, b)``: the elementwise product of ``a`` and ``b``, broadcast as the
  pattern says (``torch.multiply``; autocast does not lower it);
* ``contracts``: ``(pattern, a, b)``: a contraction that runs as ``torch.einsum``/``matmul``, which
  autocast lowers;
* ``alibi-builder``: ``(attention_mask, num_heads, dtype)``: an ALiBi bias, float32 slopes times the
  absolute positions that a running count of the mask gives (not relative to the query), cast to
  ``dtype`` and shaped ``[batch * heads, 1, keys]``;
* ``integrates``: ``(func, y0, t)``: an ODE solver that calls ``func(t_k, y)`` with times of the grid
  ``t`` cast to the state's dtype and states of ``y0``'s dtype, and returns states of that dtype:
  ``y0``'s quantity, carried along from it;
* ``embeds-timesteps``: ``(timesteps, ...)``: the sinusoidal embedding of its first argument, as the
  positions of float32 frequencies into cos and sin (what was rounded before the call stays rounded);
* ``timestep-embedder``: a module built by the call; called, it embeds its first argument so;
* ``timesteps-embedder``: a module built by the call; called, it embeds every argument but its
  last so (a timestep, and a guidance scale where given, before a projection of the last).
* ``denoiser-model``: a diffusion model built by the call (or by its ``from_pretrained``,
  ``from_config`` or ``from_single_file``); called, it embeds its time (the ``timestep`` or
  ``timesteps`` keyword, or the positional argument at ``time_position``) and a ``guidance``
  keyword so (what a sampler rounded before the call stays rounded);
* ``rotary-module``: a rotary module built by the call, holding its frequencies in a parameter
  (``model.to()`` converts it) and running its angle product with autocast off; its
  ``rotate_queries_or_keys(t)``, ``rotate_queries_and_keys(q, k)`` and
  ``rotate_queries_with_cached_keys(q, k)`` make the positions with an ``arange`` in the dtype of
  ``t`` (of ``q``), then cast them to the frequencies' dtype; called on positions, it casts them so.
* ``flash-rotary``: flash-attention's rotary module (and SwissArmyTransformer's copy), holding
  ``inv_freq`` in a buffer. Built with ``pos_idx_in_fp32=False`` (its fifth parameter), the cache
  its forward builds takes ``arange(seqlen, dtype=self.inv_freq.dtype)`` times that buffer, which
  a conversion of the model has rounded; with the default ``True``, float32 positions and
  frequencies.
* ``hf-rotary``: one of transformers' rotary modules. Subclassed, its methods call methods the
  subclass overrides (``hooks``: base method, whether it runs after construction, the hook it
  calls) and its constructor registers the float32 frequency buffers ``buffers``. Built and called
  with ``(x, position_ids)`` (4.38 and later), it reads its ``inv_freq`` buffer upcast with
  ``.float()`` into a matmul with the float32 positions under autocast off, and returns cos and
  sin in ``x``'s dtype; called with ``(x, seq_len)`` (4.37 and before), it returns cached tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class LibrarySummary:
    effect: str
    checked: str  # the library version and file the entry was checked against, and what it showed
    time_position: Optional[int] = None  # a denoiser-model's: where its forward takes the time positionally
    hooks: Tuple[Tuple[str, bool, str], ...] = ()  # an hf-rotary's
    buffers: Tuple[str, ...] = ()  # an hf-rotary's


_EINOPS = "einops 0.8.2, einops/einops.py: a reshape/permute/expand of the backend tensor, no dtype argument"
_FLASH = ("flash-attention at commit 09d422b (2025), flash_attn/layers/rotary.py: ApplyRotaryEmb.apply runs the "
          "Triton kernel on x with cos and sin as passed; the output has x's dtype")
_ROPE = ("transformers 4.57.1 and 5.24.0, transformers/modeling_rope_utils.py: every _compute_*_rope_parameters "
         "builds inv_freq from torch.arange(..., dtype=torch.int64).to(dtype=torch.float) (or float32 factors) and "
         "returns (inv_freq, attention_factor)")

_FLASH_ROTARY = ("flash-attention at commit 09d422b (2025), flash_attn/layers/rotary.py: RotaryEmbedding(dim, base, "
                 "interleaved, scale_base, pos_idx_in_fp32=True, device) registers inv_freq as a buffer; "
                 "_update_cos_sin_cache (from forward, past the cached length) takes t = arange(seqlen, "
                 "dtype=float32) and float32 inv_freq if pos_idx_in_fp32, else t = arange(seqlen, "
                 "dtype=self.inv_freq.dtype) and outer(t, self.inv_freq); SwissArmyTransformer 0.4.12 "
                 "sat/model/position_embedding/triton_rotary_embeddings.py FastRotaryEmbedding is the same")
_EINX = ("einx 0.4.3, einx/_src/frontend/ops.py and adapter/torch: multiply(description, *tensors) broadcasts "
         "and calls torch.multiply; dot(description, *tensors) runs torch.einsum (or matmul/tensordot)")
_TORCHDIFFEQ = ("torchdiffeq 0.2.5, torchdiffeq/_impl/odeint.py and misc.py: odeint and odeint_adjoint wrap func in "
                "_PerturbFunc, whose forward does t = t.to(y.dtype) before base_func(t, y); the solution stacks "
                "states of y0's dtype")
_ALIBI = ("transformers 5.24.0, transformers/models/{}: build_alibi_tensor computes arange_tensor = "
          "((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :], alibi = slopes[..., None] * "
          "arange_tensor, and returns alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)")
_TYPING = "CPython 3.10-3.13, Lib/typing.py: cast(typ, val) returns val unchanged; it only informs type checkers"
_TIMESTEPS = ("diffusers 0.42.1, diffusers/models/embeddings.py: get_timestep_embedding computes exponent = "
              "-log(max_period) * arange(0, half_dim, dtype=torch.float32) / (half_dim - shift), emb = "
              "timesteps[:, None].float() * exp(exponent)[None, :], then cat([sin(emb), cos(emb)]); Timesteps.forward "
              "calls it on its argument")
_COMBINED = (" CombinedTimestepTextProjEmbeddings.forward(timestep, pooled_projection) runs self.time_proj "
             "(Timesteps) on timestep; CombinedTimestepGuidanceTextProjEmbeddings.forward(timestep, guidance, "
             "pooled_projection) on timestep and on guidance")

_ROTARY_TORCH = ("rotary-embedding-torch 0.8.6 and 0.9.1, rotary_embedding_torch/rotary_embedding_torch.py: "
                 "self.freqs = nn.Parameter(freqs, requires_grad=learned_freq); rotate_queries_or_keys(t) calls "
                 "get_seq_pos(seq_len, dtype=t.dtype), which returns torch.arange(seq_len, dtype=dtype) + offset "
                 "(over interpolate_factor), and forward (under autocast('cuda', enabled=False)) computes "
                 "einsum('..., f -> ... f', t.type(freqs.dtype), freqs); rotate_queries_and_keys and "
                 "rotate_queries_with_cached_keys make the positions in q.dtype alike")

_ROTARY_DEFAULT = ("rotary-embedding-torch 0.8.6 and 0.9.1, rotary_embedding_torch/rotary_embedding_torch.py: "
                   "default(val, d) returns val if val is not None else d")

_XFORMERS_BIAS = ("xformers 0.0.28, xformers/ops/fmha/attn_bias.py: LowerTriangularMaskWithTensorBias(bias) is a "
                  "causal mask whose materialize() adds the bias tensor to the attention scores")

_CACHE_HOOK = ("transformers 4.37.2, transformers/models/{}: __init__ registers inv_freq in float32 (`.float()`) "
               "and calls self._set_cos_sin_cache(max_position_embeddings, ..., torch.get_default_dtype()); "
               "forward(x, seq_len) calls it again with x.dtype when seq_len passes the cached length; "
               "transformers 4.45.2 and 5.24.0: forward(x, position_ids) computes inv_freq[None, :, None].float() "
               "@ position_ids[:, None, :].float() under torch.autocast(enabled=False) and returns "
               "cos().to(x.dtype), sin().to(x.dtype) (the classes of 4.38 and later have no hook)")
_DENOISERS = ("diffusers 0.42.1, diffusers/models/{}.py: {}.forward takes the diffusion time as `timestep` (and a "
              "guidance scale as `guidance`, where it has one) and embeds it with a sinusoidal timestep embedding "
              "(Timesteps or get_timestep_embedding, directly or through a combined or AdaLayerNorm embedding)")
# The diffusion models of diffusers (a ModelMixin whose forward takes the time), by module: each
# with the place of the time among its forward's positional arguments (after self).
DIFFUSERS_DENOISERS: Dict[str, Dict[str, int]] = {
    "transformers.ace_step_transformer": {"AceStepTransformer1DModel": 1},
    "transformers.auraflow_transformer_2d": {"AuraFlowTransformer2DModel": 2},
    "transformers.cogvideox_transformer_3d": {"CogVideoXTransformer3DModel": 2},
    "transformers.consisid_transformer_3d": {"ConsisIDTransformer3DModel": 2},
    "transformers.dit_transformer_2d": {"DiTTransformer2DModel": 1},
    "transformers.hunyuan_transformer_2d": {"HunyuanDiT2DModel": 1},
    "transformers.latte_transformer_3d": {"LatteTransformer3DModel": 1},
    "transformers.lumina_nextdit2d": {"LuminaNextDiT2DModel": 1},
    "transformers.pixart_transformer_2d": {"PixArtTransformer2DModel": 2},
    "transformers.prior_transformer": {"PriorTransformer": 1},
    "transformers.sana_transformer": {"SanaTransformer2DModel": 2},
    "transformers.stable_audio_transformer": {"StableAudioDiTModel": 1},
    "transformers.transformer_2d": {"Transformer2DModel": 2},
    "transformers.transformer_2d_dreamlite": {"DreamLiteTransformer2DModel": 2},
    "transformers.transformer_allegro": {"AllegroTransformer3DModel": 2},
    "transformers.transformer_anyflow": {"AnyFlowTransformer3DModel": 1},
    "transformers.transformer_anyflow_far": {"AnyFlowFARTransformer3DModel": 1},
    "transformers.transformer_bria": {"BriaTransformer2DModel": 3},
    "transformers.transformer_bria_fibo": {"BriaFiboTransformer2DModel": 4},
    "transformers.transformer_bria_fibo2": {"BriaFibo2Transformer2DModel": 1},
    "transformers.transformer_chroma": {"ChromaTransformer2DModel": 2},
    "transformers.transformer_chronoedit": {"ChronoEditTransformer3DModel": 1},
    "transformers.transformer_cogview3plus": {"CogView3PlusTransformer2DModel": 2},
    "transformers.transformer_cogview4": {"CogView4Transformer2DModel": 2},
    "transformers.transformer_cosmos": {"CosmosTransformer3DModel": 1},
    "transformers.transformer_easyanimate": {"EasyAnimateTransformer3DModel": 1},
    "transformers.transformer_ernie_image": {"ErnieImageTransformer2DModel": 1},
    "transformers.transformer_flux": {"FluxTransformer2DModel": 3},
    "transformers.transformer_flux2": {"Flux2Transformer2DModel": 2},
    "transformers.transformer_flux3": {"Flux3Transformer2DModel": 2},
    "transformers.transformer_glm_image": {"GlmImageTransformer2DModel": 4},
    "transformers.transformer_helios": {"HeliosTransformer3DModel": 1},
    "transformers.transformer_hidream_image": {"HiDreamImageTransformer2DModel": 1},
    "transformers.transformer_hunyuan_video": {"HunyuanVideoTransformer3DModel": 1},
    "transformers.transformer_hunyuan_video15": {"HunyuanVideo15Transformer3DModel": 1},
    "transformers.transformer_hunyuan_video_framepack": {"HunyuanVideoFramepackTransformer3DModel": 1},
    "transformers.transformer_hunyuanimage": {"HunyuanImageTransformer2DModel": 1},
    "transformers.transformer_ideogram4": {"Ideogram4Transformer2DModel": 1},
    "transformers.transformer_joyimage": {"JoyImageEditTransformer3DModel": 1},
    "transformers.transformer_joyimage_edit_plus": {"JoyImageEditPlusTransformer3DModel": 1},
    "transformers.transformer_kandinsky": {"Kandinsky5Transformer3DModel": 2},
    "transformers.transformer_kandinsky6": {"Kandinsky6Transformer3DModel": 3},
    "transformers.transformer_kandinsky6_sr": {"Kandinsky6SRTransformer3DModel": 1},
    "transformers.transformer_krea2": {"Krea2Transformer2DModel": 2},
    "transformers.transformer_longcat_audio_dit": {"LongCatAudioDiTTransformer": 3},
    "transformers.transformer_longcat_image": {"LongCatImageTransformer2DModel": 2},
    "transformers.transformer_ltx": {"LTXVideoTransformer3DModel": 2},
    "transformers.transformer_ltx2": {"LTX2VideoTransformer3DModel": 4},
    "transformers.transformer_lumina2": {"Lumina2Transformer2DModel": 1},
    "transformers.transformer_minimax_h3": {"MiniMaxH3Transformer3DModel": 3},
    "transformers.transformer_minimax_music3": {"MiniMaxMusic3Transformer1DModel": 1},
    "transformers.transformer_mochi": {"MochiTransformer3DModel": 2},
    "transformers.transformer_motif_video": {"MotifVideoTransformer3DModel": 1},
    "transformers.transformer_nucleusmoe_image": {"NucleusMoEImageTransformer2DModel": 4},
    "transformers.transformer_omnigen": {"OmniGenTransformer2DModel": 1},
    "transformers.transformer_ovis_image": {"OvisImageTransformer2DModel": 2},
    "transformers.transformer_prx": {"PRXTransformer2DModel": 1},
    "transformers.transformer_qwenimage": {"QwenImageTransformer2DModel": 3},
    "transformers.transformer_qwenimage21": {"QwenImage21Transformer2DModel": 2},
    "transformers.transformer_sana_video": {"SanaVideoTransformer3DModel": 2},
    "transformers.transformer_sana_wm": {"SanaWMTransformer3DModel": 1},
    "transformers.transformer_sana_wm_refiner": {"SanaWMLTX2RefinerTransformer3DModel": 2},
    "transformers.transformer_sd3": {"SD3Transformer2DModel": 3},
    "transformers.transformer_skyreels_v2": {"SkyReelsV2Transformer3DModel": 1},
    "transformers.transformer_stable_audio3": {"StableAudio3DiTModel": 1},
    "transformers.transformer_temporal": {"TransformerTemporalModel": 2},
    "transformers.transformer_wan": {"WanTransformer3DModel": 1},
    "transformers.transformer_wan_animate": {"WanAnimateTransformer3DModel": 1},
    "transformers.transformer_wan_animate_2": {"WanAnimate2Transformer3DModel": 1},
    "transformers.transformer_wan_vace": {"WanVACETransformer3DModel": 1},
    "unets.unet_1d": {"UNet1DModel": 1},
    "unets.unet_2d": {"UNet2DModel": 1},
    "unets.unet_2d_condition": {"UNet2DConditionModel": 1},
    "unets.unet_3d_condition": {"UNet3DConditionModel": 1},
    "unets.unet_i2vgen_xl": {"I2VGenXLUNet": 1},
    "unets.unet_kandinsky3": {"Kandinsky3UNet": 1},
    "unets.unet_motion_model": {"UNetMotionModel": 1},
    "unets.unet_spatio_temporal_condition": {"UNetSpatioTemporalConditionModel": 1},
}
# transformers' rotary classes (4.37 and before) that call _set_cos_sin_cache from __init__ and forward.
CACHE_HOOK_ROTARIES: Dict[str, Tuple[str, ...]] = {
    "deprecated.open_llama.modeling_open_llama": ("OpenLlama",),
    "falcon.modeling_falcon": ("Falcon",),
    "gpt_neox.modeling_gpt_neox": ("GPTNeoX",),
    "llama.modeling_llama": ("Llama",),
    "persimmon.modeling_persimmon": ("Persimmon",),
    "phi.modeling_phi": ("Phi",),
}
CACHE_HOOK_SINGLE = {"gpt_neox_japanese.modeling_gpt_neox_japanese": "RotaryEmbedding",
                     "idefics.modeling_idefics": "IdeficsEmbedding",
                     "mistral.modeling_mistral": "MistralRotaryEmbedding",
                     "mixtral.modeling_mixtral": "MixtralRotaryEmbedding",
                     "qwen2.modeling_qwen2": "Qwen2RotaryEmbedding"}
# How a diffusers model is built besides calling its class.
MODEL_LOADERS = ("from_pretrained", "from_config", "from_single_file")
# A model that transformers' loaders return (``AutoModelForCausalLM.from_pretrained(path,
# torch_dtype=torch.bfloat16)``, ``from_config``): its weights come in the load dtype, but its rotary
# modules keep their frequency buffers in float32 until the model is converted (``.half()``,
# ``.to(dtype)``). Measured on transformers 4.36.2 and 5.24.0 with torch 2.13.0 by
# tests/test_real_models.py::test_a_loaded_model_keeps_its_rotary_frequencies_float32.
TRANSFORMERS_LOADERS = ("from_pretrained", "from_config")
LOADED_ROTARY_BUFFERS = ("inv_freq",)


def _denoiser_quals() -> Dict[str, "LibrarySummary"]:
    """Each denoiser under every name diffusers exports it by, and its loaders."""
    found = {}
    for module, classes in DIFFUSERS_DENOISERS.items():
        for cls, position in classes.items():
            summary = LibrarySummary("denoiser-model", _DENOISERS.format(module.replace(".", "/"), cls), position)
            for where in ("diffusers", "diffusers.models", f"diffusers.models.{module.split('.')[0]}",
                          f"diffusers.models.{module}"):
                found[f"{where}.{cls}"] = summary
                found.update((f"{where}.{cls}.{loader}", summary) for loader in MODEL_LOADERS)
    return found


def _cache_hook_quals() -> Dict[str, "LibrarySummary"]:
    """transformers' rotary classes whose ``__init__`` (at construction) and ``forward`` (after it)
    call ``_set_cos_sin_cache``."""
    classes = [(module, f"{prefix}{kind}RotaryEmbedding") for module, prefixes in CACHE_HOOK_ROTARIES.items()
               for prefix in prefixes for kind in ("", "LinearScaling", "DynamicNTKScaling")]
    classes += list(CACHE_HOOK_SINGLE.items())
    hooks = (("__init__", False, "_set_cos_sin_cache"), ("forward", True, "_set_cos_sin_cache"))
    return {f"transformers.models.{module}.{cls}": LibrarySummary(
        "hf-rotary", _CACHE_HOOK.format(module.replace(".", "/") + ".py"), hooks=hooks,
        buffers=("inv_freq",))
        for module, cls in classes}


LIBRARY: Dict[str, LibrarySummary] = {
    **_denoiser_quals(),
    **_cache_hook_quals(),
    "typing.cast": LibrarySummary("returns-last", _TYPING),
    "einops.rearrange": LibrarySummary("preserves", _EINOPS),
    "einops.repeat": LibrarySummary("preserves", _EINOPS),
    "einx.multiply": LibrarySummary("multiplies", _EINX),
    "einx.dot": LibrarySummary("contracts", _EINX),
    "torchdiffeq.odeint": LibrarySummary("integrates", _TORCHDIFFEQ),
    "torchdiffeq.odeint_adjoint": LibrarySummary("integrates", _TORCHDIFFEQ),
    "transformers.models.bloom.modeling_bloom.build_alibi_tensor": LibrarySummary(
        "alibi-builder", _ALIBI.format("bloom/modeling_bloom.py")),
    "transformers.models.falcon.modeling_falcon.build_alibi_tensor": LibrarySummary(
        "alibi-builder", _ALIBI.format("falcon/modeling_falcon.py") + " (its slopes cast to bfloat16 first)"),
    "diffusers.models.embeddings.get_timestep_embedding": LibrarySummary("embeds-timesteps", _TIMESTEPS),
    "diffusers.models.embeddings.Timesteps": LibrarySummary("timestep-embedder", _TIMESTEPS),
    "diffusers.models.embeddings.CombinedTimestepTextProjEmbeddings": LibrarySummary(
        "timesteps-embedder", _TIMESTEPS + ";" + _COMBINED),
    "diffusers.models.embeddings.CombinedTimestepGuidanceTextProjEmbeddings": LibrarySummary(
        "timesteps-embedder", _TIMESTEPS + ";" + _COMBINED),
    "rotary_embedding_torch.RotaryEmbedding": LibrarySummary("rotary-module", _ROTARY_TORCH),
    "rotary_embedding_torch.rotary_embedding_torch.default": LibrarySummary("either-argument", _ROTARY_DEFAULT),
    "rotary_embedding_torch.rotary_embedding_torch.RotaryEmbedding": LibrarySummary("rotary-module", _ROTARY_TORCH),
    **{f"xformers.ops.{where}LowerTriangularMaskWithTensorBias": LibrarySummary("attention-bias", _XFORMERS_BIAS)
       for where in ("", "fmha.", "fmha.attn_bias.")},
    "flash_attn.layers.rotary.RotaryEmbedding": LibrarySummary("flash-rotary", _FLASH_ROTARY),
    "sat.model.position_embedding.triton_rotary_embeddings.FastRotaryEmbedding": LibrarySummary(
        "flash-rotary", _FLASH_ROTARY),
    "flash_attn.layers.rotary.apply_rotary_emb": LibrarySummary("applies-rotary", _FLASH),
    "flash_attn.layers.rotary.apply_rotary_emb_func": LibrarySummary("applies-rotary", _FLASH),
    "transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS": LibrarySummary(
        "rope-init-table", _ROPE + "; ROPE_INIT_FUNCTIONS maps rope types to them"),
    **{f"transformers.modeling_rope_utils._compute_{kind}_rope_parameters": LibrarySummary("rope-init", _ROPE)
       for kind in ("default", "linear_scaling", "dynamic_ntk", "yarn", "longrope", "llama3", "proportional")},
}

# A file can only get a role from this table by naming one of these (lower-cased): the prefilter
# lets such a file through (see poslint.engine.prefilter).
ROLE_WORDS = frozenset(qual.rsplit(".", 1)[-1].lower() for qual, summary in LIBRARY.items()
                       if summary.effect in ("rope-init", "rope-init-table", "alibi-builder", "embeds-timesteps",
                                             "timestep-embedder", "timesteps-embedder", "rotary-module", "hf-rotary",
                                             "flash-rotary")) \
    | frozenset(cls.lower() for classes in DIFFUSERS_DENOISERS.values() for cls in classes)
