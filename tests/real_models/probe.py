"""Run tiny seeded random models of one installed transformers release; save what they produce.

Run by tests/test_real_models.py in a subprocess whose sys.path holds one release (pristine or
fixed by poslint): `python probe.py OUT.pt MODULE... -- ARCH... -- DIR...`. MODULEs are imported
first (the files that poslint changed). Each ARCH of the fixed list that this release has saves
float32 and 16-bit outputs, the state_dict signature, generate() with a KV cache for language
models, and whatever raised. Each DIR (a `models/<dir>` that the fix changed) gets a smaller,
generic run: the first of its model types whose config shrinks to a tiny model with the generic
arguments below, float32 and bf16 outputs on a short input, and the state_dict signature, within
a time cap; when none can be run, the reason is saved instead.
"""

from __future__ import annotations

import importlib
import inspect
import signal
import sys
import traceback
import warnings

import torch

SEQ_LEN = 1024  # well past max_position_embeddings below, so cos/sin caches are rebuilt in forward
VOCAB = 128
SMALL = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, initializer_range=0.2,
             num_attention_heads=4, max_position_embeddings=64)
IMAGE = 256  # pixels per side: 64 x 64 patches of 4 pixels, positions up to 63 on each axis
QWEN2_VL_GRID = (1, 16, 16)  # (frames, patch rows, patch columns) of the one image given to the vision tower
QWEN2_VL_VISION = dict(depth=2, embed_dim=32, num_heads=2, hidden_size=64, mlp_ratio=2, patch_size=4,
                       temporal_patch_size=2, spatial_merge_size=2, in_channels=3)


def _rope(**extra):
    return dict(rope_type="default", rope_theta=10000.0, **extra)


# name -> (model type, config kwargs, kind). Kinds: "causal" and "seq2seq" language models;
# "pixtral" (2D axial rotary on a patch grid) and "qwen2_vl-vision" (the same, from a grid_thw).
ARCHS = {
    "llama": ("llama", dict(SMALL, num_key_value_heads=2), "causal"),
    "mistral": ("mistral", dict(SMALL, num_key_value_heads=2, sliding_window=None), "causal"),
    "qwen2": ("qwen2", dict(SMALL, num_key_value_heads=2), "causal"),
    "gpt_neox": ("gpt_neox", dict(SMALL, rotary_pct=0.5), "causal"),
    "phi": ("phi", dict(SMALL), "causal"),
    "falcon": ("falcon", dict(SMALL, alibi=True, new_decoder_architecture=False, multi_query=False), "causal"),
    "falcon-rotary": ("falcon", dict(SMALL, alibi=False, new_decoder_architecture=False), "causal"),
    "bloom": ("bloom", dict(vocab_size=VOCAB, hidden_size=64, n_layer=2, n_head=4), "causal"),
    "mpt": ("mpt", dict(vocab_size=VOCAB, d_model=64, n_heads=4, n_layers=2, expansion_ratio=2, max_seq_len=SEQ_LEN),
            "causal"),
    "t5": ("t5", dict(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                      decoder_start_token_id=0), "seq2seq"),
    # 3D multimodal rotary (mrope: temporal, height and width sections of the frequencies); text input
    # gives it three equal position rows, the path that a chat without images takes.
    "qwen2_vl": ("qwen2_vl", dict(text_config=dict(SMALL, num_key_value_heads=2, rope_parameters=_rope(
        mrope_section=[2, 3, 3])), vision_config=QWEN2_VL_VISION), "causal"),
    "qwen2_vl-vision": ("qwen2_vl", dict(text_config=dict(SMALL, num_key_value_heads=2), vision_config=QWEN2_VL_VISION),
                        "qwen2_vl-vision"),
    "pixtral": ("pixtral", dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                head_dim=16, image_size=IMAGE, patch_size=4), "pixtral"),
    # rotation by complex numbers: torch.polar frequencies, torch.view_as_complex on q and k
    "deepseek_v2": ("deepseek_v2", dict(SMALL, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2,
                                        n_shared_experts=1, moe_intermediate_size=32, first_k_dense_replace=1,
                                        kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=8, qk_nope_head_dim=8,
                                        v_head_dim=16, n_group=1, topk_group=1), "causal"),
}

# The generic run of a changed directory: names that most configs have or map (attribute_map).
GENERIC = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=4, head_dim=16, rotary_dim=8, max_position_embeddings=64, pad_token_id=0,
               initializer_range=0.2, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128)
# model type -> what it needs on top: mrope sections that add up to its rotary half-width
GENERIC_EXTRA = {"glm4v_text": dict(rope_parameters=_rope(partial_rotary_factor=0.5, mrope_section=[2, 1, 1]))}
GENERIC_SEQ_LEN = 48
GENERIC_MAX_PARAMETERS = 20_000_000  # a config that the generic arguments do not shrink stays big
GENERIC_CAP_S = 30  # per directory, building and running included


def build(transformers, arch: str):
    model_type, kwargs, kind = ARCHS[arch]
    config = transformers.AutoConfig.for_model(model_type, **kwargs)
    torch.manual_seed(0)
    if kind == "pixtral":
        model = transformers.AutoModel.from_config(config)
    elif kind == "qwen2_vl-vision":
        model = transformers.Qwen2VLForConditionalGeneration(config).model.visual
    elif kind == "seq2seq":
        model = transformers.AutoModelForSeq2SeqLM.from_config(config)
    elif type(config) in transformers.MODEL_FOR_CAUSAL_LM_MAPPING:
        model = transformers.AutoModelForCausalLM.from_config(config)
    else:  # a multimodal model that generates text (qwen2_vl)
        model = transformers.AutoModelForImageTextToText.from_config(config)
    model.eval()
    return model, kind


def _first_tensor(output) -> torch.Tensor:
    if isinstance(output, torch.Tensor):
        return output
    values = output.to_tuple() if hasattr(output, "to_tuple") else output
    return next(v for v in values if isinstance(v, torch.Tensor) and v.is_floating_point())


def run(model, kind: str, dtype: torch.dtype) -> torch.Tensor:
    """The model's first floating output (logits, or the last hidden state), as float32."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        if kind == "pixtral":
            pixels = torch.randn(1, 3, IMAGE, IMAGE, generator=generator).to(dtype)
            return _first_tensor(model(pixel_values=pixels)).float()
        if kind == "qwen2_vl-vision":
            t, h, w = QWEN2_VL_GRID
            patches = torch.randn(t * h * w, 3 * 2 * 4 * 4, generator=generator).to(dtype)
            return _first_tensor(model(hidden_states=patches, grid_thw=torch.tensor([QWEN2_VL_GRID]))).float()
        ids = torch.randint(0, VOCAB, (1, SEQ_LEN), generator=generator)
        if kind == "seq2seq":
            return model(input_ids=ids, decoder_input_ids=ids).logits.float()
        return model(input_ids=ids).logits.float()


def probe(transformers, arch: str) -> dict:
    out: dict = {}
    model, kind = build(transformers, arch)
    out["state"] = [(k, tuple(v.shape), str(v.dtype)) for k, v in model.state_dict().items()]
    out["fp32"] = run(model, kind, torch.float32)
    for name, dtype, convert in (("bf16", torch.bfloat16, lambda m: m.to(torch.bfloat16)),
                                 ("fp16", torch.float16, lambda m: m.half())):
        low, _ = build(transformers, arch)
        low = convert(low)
        try:
            out[name] = run(low, kind, dtype)
            if kind in ("causal", "seq2seq"):
                ids = torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(2))
                with torch.no_grad():
                    generated = low.generate(ids, max_new_tokens=4, do_sample=False, use_cache=True, pad_token_id=0)
                out[f"{name}-generate"] = tuple(generated.shape)
        except Exception as exc:  # recorded, judged by the test
            out[f"{name}-error"] = f"{type(exc).__name__}: {exc}"
    return out


class _Cap(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Cap(f"over the {GENERIC_CAP_S} s cap")


def _model_types(transformers, directory: str):
    """The model types whose config lives in models/<directory>, the one named like it first."""
    auto = transformers.models.auto.configuration_auto
    types = [t for t in auto.CONFIG_MAPPING_NAMES if auto.model_type_to_module_name(t) == directory]
    return sorted(types, key=lambda t: (t.replace("-", "_") != directory.rpartition(".")[2], t))


def _generic_build(transformers, model_type: str):
    config = transformers.AutoConfig.for_model(model_type, **GENERIC, **GENERIC_EXTRA.get(model_type, {}))
    mappings = ((transformers.MODEL_FOR_CAUSAL_LM_MAPPING, transformers.AutoModelForCausalLM),
                (transformers.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING, transformers.AutoModelForSeq2SeqLM),
                (transformers.MODEL_MAPPING, transformers.AutoModel))
    auto = next((a for mapping, a in mappings if type(config) in mapping), None)
    if auto is None:
        raise LookupError("no Auto model class for this config")
    with torch.device("meta"):
        size = sum(p.numel() for p in auto.from_config(config).parameters())
    if size > GENERIC_MAX_PARAMETERS:
        raise LookupError(f"{size:,} parameters with the generic arguments (cap {GENERIC_MAX_PARAMETERS:,})")
    params = inspect.signature(auto._model_mapping[type(config)].forward).parameters
    if "input_ids" not in params:
        raise LookupError("its forward takes no input_ids (image, audio or time-series input)")

    def make():
        torch.manual_seed(0)
        return auto.from_config(config).eval()

    def call(model, **kwargs):
        ids = torch.randint(0, VOCAB, (1, GENERIC_SEQ_LEN), generator=torch.Generator().manual_seed(1))
        if "decoder_input_ids" in params and config.is_encoder_decoder:
            kwargs["decoder_input_ids"] = ids
        with torch.no_grad():
            return _first_tensor(model(input_ids=ids, **kwargs)).float()

    return make, call


def generic(transformers, directory: str) -> dict:
    reasons = []
    for model_type in _model_types(transformers, directory):
        signal.alarm(GENERIC_CAP_S)
        try:
            make, call = _generic_build(transformers, model_type)
            model = make()
            out = {"model-type": model_type, "fp32": call(model),
                   "state": [(k, tuple(v.shape), str(v.dtype)) for k, v in model.state_dict().items()]}
            try:
                out["bf16"] = call(make().to(torch.bfloat16))
            except _Cap:
                raise
            except Exception as exc:  # recorded, judged by the test
                out["bf16-error"] = f"{type(exc).__name__}: {exc}"
            return out
        except Exception as exc:
            reasons.append(f"{model_type}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        finally:
            signal.alarm(0)
    return {"skipped": "; ".join(reasons) or "no model type has its config there"}


def main(argv) -> int:
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGALRM, _on_alarm)
    path, rest = argv[0], argv[1:]
    first = rest.index("--")
    second = rest.index("--", first + 1)
    modules, archs, directories = rest[:first], rest[first + 1:second], rest[second + 1:]
    import transformers

    transformers.logging.set_verbosity_error()
    results: dict = {"version": transformers.__version__, "import-errors": {}, "archs": {}, "changed": {}}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            results["import-errors"][name] = f"{type(exc).__name__}: {exc}"
    for arch in archs:
        if ARCHS[arch][0] not in transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES:
            continue
        try:
            results["archs"][arch] = probe(transformers, arch)
        except Exception:
            results["archs"][arch] = {"build-error": traceback.format_exc(limit=3)}
    for directory in directories:
        results["changed"][directory] = generic(transformers, directory)
    torch.save(results, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
