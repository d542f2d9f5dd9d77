"""Registry of models that `poslint.runtime` runs in CI. Adding a model takes one line.

Each file defines `poslint_factory(seq_len=8192)` (see docs/verify.md for the protocol).

expect="collide": each scenario in `where` (default bf16) shows the bug's signature: rotary, at
    least 80% of positions repeat the previous encoding; ALiBi, at most 5 distinct values among
    the 64 keys nearest the diagonal.
expect="fail": each scenario in `where` fails its thresholds.
expect="pass": every scenario passes. A `<style>__fixed.py` case must also keep the output dtypes
    of its registered buggy twin `<style>.py` in every scenario.

Every buggy fixture is also fixed with `poslint check --fix --unsafe-fixes` and must then pass
every scenario with its output dtypes unchanged.

`issue` / `fix_issue` record a known, reported contradiction (the model, or its --fix output,
does not behave as registered). The test then runs as a strict xfail: it fails as soon as the
contradiction is gone, so the note cannot go stale.

ALiBi models that return the full [heads, L, L] bias run at 1024 positions: at 8192 the float64
reference alone is 4 GiB, and at 2048 they took most of the suite's run time. They still fail
in bf16 (17 distinct values among the 64 nearest keys, error 1.5), not down to 5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

ROPE = "tests/fixtures/rope/checker/"
ALIBI = "tests/fixtures/alibi/checker/"
MODELS = "tests/runtime_models/"

BF16 = ("bf16",)
HALF = ("bf16", "fp16")
AUTOCAST = ("autocast-cpu", "autocast-cuda-emulated")
CUDA = ("autocast-cuda-emulated",)
ALL = ("bf16", "fp16", "autocast-cpu", "autocast-cuda-emulated")
FULL_BIAS = 1024
DEFAULT_BF16 = ("bf16-default",)
TF32 = ("tf32-emulated",)
FP32 = ("fp32",)
# Long-context cases sample this many positions from their context (their factory says how).
SAMPLED = 4096


@dataclass(frozen=True)
class Case:
    path: str
    kind: str  # "rotary" | "alibi"
    expect: str  # "collide" | "fail" | "pass"
    where: Tuple[str, ...] = BF16
    seq_len: int = 8192
    issue: str = ""
    fix_issue: str = ""
    # Why --fix leaves this buggy fixture alone: no fix makes it exact while keeping the dtype
    # handed to the rest of the model (the finding stays).
    no_fix: str = ""

    @property
    def id(self) -> str:
        return self.path.rsplit("/", 1)[-1][: -len(".py")]


CASES = [
    # our own models (tests/runtime_models)
    Case(MODELS + "llama_old.py", kind="rotary", expect="collide", where=BF16 + CUDA),
    Case(MODELS + "llama_old__fixed.py", kind="rotary", expect="pass"),
    Case(MODELS + "llama_matmul.py", kind="rotary", expect="collide", where=AUTOCAST),
    Case(MODELS + "llama_matmul__fixed.py", kind="rotary", expect="pass"),
    Case(MODELS + "alibi_bloom.py", kind="alibi", expect="collide"),
    Case(MODELS + "alibi_bloom__fixed.py", kind="alibi", expect="pass"),
    # RoPE fixtures
    Case(ROPE + "default_dtype_positions.py", kind="rotary", expect="collide", where=DEFAULT_BF16),
    Case(ROPE + "default_dtype_positions__fixed.py", kind="rotary", expect="pass"),
    # an untyped base leaves the exponent's dtype to the frequencies: rounded under a bf16 default
    Case(ROPE + "default_dtype_untyped_base.py", kind="rotary", expect="fail", where=DEFAULT_BF16),
    Case(ROPE + "forward_default_dtype_positions.py", kind="rotary", expect="pass"),
    Case(ROPE + "cos_sin_cast_in_function.py", kind="rotary", expect="fail", where=("bf16", "autocast-cuda-emulated")),
    # per-axis angle tables in a family of buffers, looked up and concatenated, cos/sin returned uncast
    Case(ROPE + "angle_table_family.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "promoted_rounded_frequencies.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "mrope_ids_in_token_dtype.py", kind="rotary", expect="collide"),
    Case(ROPE + "positions_in_record.py", kind="rotary", expect="collide"),
    # fresh frequencies registered on the dynamic kind's path only: the default kind upcasts a rounded buffer
    Case(ROPE + "buffer_registered_on_one_path.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "image_ids_written_into_zeros.py", kind="rotary", expect="fail", where=HALF,
         fix_issue="the fixed ids stay on the CPU (made with no device), where CUDA autocast does not reach; "
                   "autocast-cuda-emulated lowers every einsum on one CPU and cannot tell (bf16 and fp16 pass)"),
    Case(ROPE + "partial_table_slice_store.py", kind="rotary", expect="fail", where=HALF + CUDA,
         fix_issue="POS103 has no fix for a batched einsum ('bi,bj->bij'): the --fix output keeps the "
                   "float32 buffer copy (bf16 and fp16 pass) but still runs the einsum under CUDA autocast"),
    # a 52 x 52 patch grid's angles kept in a buffer (the conversion moves them by up to 0.12 rad)
    Case(ROPE + "configured_grid_angle_buffer.py", kind="rotary", expect="fail", where=HALF, seq_len=2704),
    Case(ROPE + "angle_tables_computed_names.py", kind="rotary", expect="fail", where=HALF),
    # buffers made by register_buffer keywords, unbound calls, __setattr__ and the module's _buffers dict
    Case(ROPE + "buffer_apis.py", kind="rotary", expect="fail", where=HALF),
    # a continuous value over two buffers of wavelengths, the sine half and the cosine half
    Case(ROPE + "wavelength_halves_encoder.py", kind="rotary", expect="fail", where=HALF),
    # frequencies read through a @property getter that scales the buffer
    Case(ROPE + "frequencies_behind_property.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "dynamic_ntk.py", kind="rotary", expect="collide", where=AUTOCAST),
    Case(ROPE + "dynamic_ntk__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "falcon.py", kind="rotary", expect="collide", where=BF16 + CUDA),
    # a complex polar table that a subclass hook builds for its base's constructor, kept in a buffer
    Case(ROPE + "base_hook_complex_cache.py", kind="rotary", expect="fail", where=HALF, seq_len=2048),
    # Gaussian Fourier time features from a frozen parameter that the conversion rounds
    Case(ROPE + "gaussian_fourier_time.py", kind="rotary", expect="fail", where=HALF, seq_len=1000),
    # a diffusion timestep in [0, 1] rounded to 16 bits before its sinusoidal embedding
    Case(ROPE + "timestep_cast_to_activations.py", kind="rotary", expect="fail", where=HALF, seq_len=1000),
    # timesteps cast to a dtype bound by starred unpacking; a sinusoid table of float arange bounds
    Case(ROPE + "timesteps_dtype_by_starred_unpacking.py", kind="rotary", expect="fail", where=BF16, seq_len=1000),
    Case(ROPE + "sinusoid_table_float_bounds.py", kind="rotary", expect="collide", where=DEFAULT_BF16, seq_len=5000),
    # positions counted as a running sum of ones shaped like the activations
    Case(ROPE + "positions_counted_from_ones_like.py", kind="rotary", expect="collide", where=BF16),
    # positions in the dtype of projected queries: 16-bit after a conversion and under autocast alike
    Case(ROPE + "positions_in_layer_output_dtype.py", kind="rotary", expect="collide", where=BF16 + AUTOCAST),
    Case(ROPE + "falcon__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "freq_helper.py", kind="rotary", expect="fail", where=DEFAULT_BF16),
    Case(ROPE + "freq_helper__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "functional.py", kind="rotary", expect="collide"),
    Case(ROPE + "functional__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "gpt_neox.py", kind="rotary", expect="collide", where=BF16 + CUDA),
    Case(ROPE + "gpt_neox__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "gptj_sinusoidal.py", kind="rotary", expect="collide", where=CUDA,
         no_fix="cos/sin are not cast afterwards: under autocast they would turn float32"),
    Case(ROPE + "gptj_sinusoidal__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "half_positions_inference.py", kind="rotary", expect="fail", where=ALL),
    Case(ROPE + "half_positions_inference__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "linear_scaling.py", kind="rotary", expect="collide"),
    Case(ROPE + "linear_scaling__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "llama_hf_2023.py", kind="rotary", expect="collide", where=BF16 + CUDA),
    Case(ROPE + "llama_hf_2023__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "positions_passed_past_a_none_default.py", kind="rotary", expect="collide", where=BF16),
    Case(ROPE + "buffer_object_rotary.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "buffer_object_rotary__fixed.py", kind="rotary", expect="pass"),
    # positions made float16 for fp16 kernels: 4097 of 8192 stay distinct in every scenario
    Case(ROPE + "float16_positions.py", kind="rotary", expect="fail", where=ALL),
    Case(ROPE + "float16_positions__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "promoted_compute_dtype.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "promoted_compute_dtype__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "layer_type_rotary.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "layer_type_rotary__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "llama_hf_2024_post_fix.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "llama_hf_2024_post_fix__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "llama_hf_2024_pre_fix.py", kind="rotary", expect="collide", where=AUTOCAST),
    Case(ROPE + "llama_hf_2024_pre_fix__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "long_context_fp32.py", kind="rotary", expect="fail", where=FP32 + ALL, seq_len=SAMPLED),
    Case(ROPE + "long_context_fp32__fixed.py", kind="rotary", expect="pass", seq_len=SAMPLED),
    Case(ROPE + "meta_polar.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "meta_polar__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "partial_rotary.py", kind="rotary", expect="collide", where=BF16 + CUDA),
    Case(ROPE + "partial_rotary__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "vision_2d.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "vision_2d__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "tf32_matmul.py", kind="rotary", expect="fail", where=TF32),
    Case(ROPE + "tf32_matmul__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "yarn.py", kind="rotary", expect="fail", where=HALF),
    Case(ROPE + "yarn__fixed.py", kind="rotary", expect="pass"),
    Case(ROPE + "wrapped_positions_in_buffer_dtype.py", kind="rotary", expect="collide"),
    # integer positions times a scale annotated float, under a loader's bf16 default
    Case(ROPE + "scale_annotated_float.py", kind="rotary", expect="collide", where=DEFAULT_BF16),
    # geometric distance bands in a plain attribute, made under a bf16 default
    Case(ROPE + "distance_bands_plain_attribute.py", kind="rotary", expect="fail", where=DEFAULT_BF16),
    # linear pixel bands (up to 5 pi) over a 256-step axis: exact positions, rounded bands
    Case(ROPE + "linear_bands_outer.py", kind="rotary", expect="fail", where=HALF, seq_len=256),
    Case(ROPE + "linear_bands_einsum.py", kind="rotary", expect="fail", where=HALF + CUDA, seq_len=256),
    # a query grid cast to the latents' dtype by a plain callable object, decoded into Fourier features
    Case(ROPE + "query_grid_through_plain_callable.py", kind="rotary", expect="fail", where=HALF, seq_len=32768),
    # unit patch coordinates in the activations' dtype (a conv's, so autocast's too) into a rotary submodule
    Case(ROPE + "unit_coordinates_into_rotary_of_any_width.py", kind="rotary", expect="fail",
         where=HALF + AUTOCAST, seq_len=1024),
    # flow time in the activations' dtype, handed to a denoiser the sampler moves before each step
    Case(ROPE + "offload_moves_module_itself.py", kind="rotary", expect="fail", where=HALF, seq_len=1024),
    # wavelength tables of event times made in the default dtype at construction
    Case(ROPE + "event_time_wavelength_lists.py", kind="rotary", expect="fail", where=DEFAULT_BF16, seq_len=1000),
    # a sampler's time broadcast to the batch by ones in the latents' dtype, into a sinusoid up to 1e4
    Case(ROPE + "time_broadcast_by_ones.py", kind="rotary", expect="fail", where=HALF, seq_len=1024),
    # guidance 6.0 and a timestep of 999 scaled in bf16 past what it holds (6016, 1000); fp16 holds both
    Case(ROPE + "guidance_scaled_in_16_bits.py", kind="rotary", expect="fail", where=BF16, seq_len=1024),
    Case(ROPE + "ok_arange_indexing.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_autocast_disabled.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_autocast_disabled_decorator.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_broadcast_fp32.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_buffer_kept_but_recomputed.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_cos_sin_cast_at_end.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_float64_freqs.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_glm_style_cache.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_init_only.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_int_arange_then_float.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_integer_position_buffer.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_matmul_no_tf32_setting.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_outer_fp32.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_plain_attribute_inv_freq.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_sinusoidal_absolute_fp32.py", kind="rotary", expect="pass"),
    Case(ROPE + "ok_tf32_elementwise.py", kind="rotary", expect="pass", where=TF32),
    # ALiBi fixtures
    Case(ALIBI + "alibi_buffer.py", kind="alibi", expect="collide",
         no_fix="float32 bits read back would hand attention a float32 bias"),
    Case(ALIBI + "alibi_buffer__fixed.py", kind="alibi", expect="pass"),
    Case(ALIBI + "alibi_default_dtype.py", kind="alibi", expect="collide", where=ALL,
         no_fix="a float32 bias would change its dtype under a 16-bit default"),
    Case(ALIBI + "alibi_default_dtype__fixed.py", kind="alibi", expect="pass"),
    Case(ALIBI + "alibi_positions_bf16.py", kind="alibi", expect="collide", where=BF16 + AUTOCAST,
         no_fix="float32 positions times 16-bit slopes would turn the bias float32"),
    Case(ALIBI + "alibi_positions_bf16__fixed.py", kind="alibi", expect="pass"),
    Case(ALIBI + "baichuan.py", kind="alibi", expect="fail", seq_len=FULL_BIAS),
    Case(ALIBI + "baichuan__fixed.py", kind="alibi", expect="pass", seq_len=FULL_BIAS),
    Case(ALIBI + "bloom.py", kind="alibi", expect="collide",
         no_fix="a broadcast bias cast back to 16 bits collides again; float32 would meet bf16 scores"),
    Case(ALIBI + "bloom__fixed.py", kind="alibi", expect="pass"),
    Case(ALIBI + "degenerate_relative.py", kind="alibi", expect="fail", seq_len=FULL_BIAS),
    Case(ALIBI + "degenerate_relative__fixed.py", kind="alibi", expect="pass", seq_len=FULL_BIAS),
    Case(ALIBI + "fairseq_future_mask.py", kind="alibi", expect="fail", seq_len=FULL_BIAS),
    Case(ALIBI + "fairseq_future_mask__fixed.py", kind="alibi", expect="pass", seq_len=FULL_BIAS),
    Case(ALIBI + "falcon_alibi.py", kind="alibi", expect="collide", where=ALL,
         no_fix="float32 slopes change float32 outputs (checkpoints use the rounded ones) and leave the cast"),
    Case(ALIBI + "falcon_alibi__fixed.py", kind="alibi", expect="pass"),
    Case(ALIBI + "mpt.py", kind="alibi", expect="fail", seq_len=FULL_BIAS),
    Case(ALIBI + "mpt__fixed.py", kind="alibi", expect="pass", seq_len=FULL_BIAS),
    Case(ALIBI + "ok_builder_called_with_float32.py", kind="alibi", expect="pass"),
    Case(ALIBI + "ok_float32_only.py", kind="alibi", expect="pass"),
    Case(ALIBI + "ok_geometric_not_alibi.py", kind="alibi", expect="pass"),
    Case(ALIBI + "ok_mask_cumsum_indices.py", kind="alibi", expect="pass"),
    Case(ALIBI + "ok_relative_bias.py", kind="alibi", expect="pass"),
    Case(ALIBI + "ok_relative_then_bf16.py", kind="alibi", expect="pass", seq_len=FULL_BIAS),
]
