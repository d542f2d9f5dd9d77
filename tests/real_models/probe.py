"""Run tiny seeded random models of one installed transformers release; save what they produce.

Run by tests/test_real_models.py in a subprocess whose sys.path holds one release (pristine or
fixed by poslint): `python probe.py OUT.pt MODULE [MODULE...] -- ARCH [ARCH...]`. MODULEs are
imported first (the files that poslint changed). For each ARCH that this release has, it saves
float32 and 16-bit logits, the state_dict signature, and whatever raised.
"""

from __future__ import annotations

import importlib
import sys
import traceback
import warnings

import torch

SEQ_LEN = 1024  # well past max_position_embeddings below, so cos/sin caches are rebuilt in forward
VOCAB = 128
SMALL = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, initializer_range=0.2,
             num_attention_heads=4, max_position_embeddings=64)

# model_type -> (config kwargs, seq2seq?)
ARCHS = {
    "llama": (dict(SMALL, num_key_value_heads=2), False),
    "mistral": (dict(SMALL, num_key_value_heads=2, sliding_window=None), False),
    "qwen2": (dict(SMALL, num_key_value_heads=2), False),
    "gpt_neox": (dict(SMALL, rotary_pct=0.5), False),
    "phi": (dict(SMALL), False),
    "falcon": (dict(SMALL, alibi=True, new_decoder_architecture=False, multi_query=False), False),
    "falcon-rotary": (dict(SMALL, alibi=False, new_decoder_architecture=False), False),
    "bloom": (dict(vocab_size=VOCAB, hidden_size=64, n_layer=2, n_head=4), False),
    "mpt": (dict(vocab_size=VOCAB, d_model=64, n_heads=4, n_layers=2, expansion_ratio=2, max_seq_len=SEQ_LEN), False),
    "t5": (dict(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                decoder_start_token_id=0), True),
}


def build(transformers, arch: str, dtype=None):
    kwargs, seq2seq = ARCHS[arch]
    config = transformers.AutoConfig.for_model(arch.split("-")[0], **kwargs)
    auto = transformers.AutoModelForSeq2SeqLM if seq2seq else transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    model = auto.from_config(config)
    model.eval()
    return model, seq2seq


def logits(model, seq2seq, ids):
    with torch.no_grad():
        if seq2seq:
            return model(input_ids=ids, decoder_input_ids=ids).logits.float()
        return model(input_ids=ids).logits.float()


def probe(transformers, arch: str) -> dict:
    out: dict = {}
    model, seq2seq = build(transformers, arch)
    ids = torch.randint(0, VOCAB, (1, SEQ_LEN), generator=torch.Generator().manual_seed(1))
    out["state"] = [(k, tuple(v.shape), str(v.dtype)) for k, v in model.state_dict().items()]
    out["fp32"] = logits(model, seq2seq, ids)
    for name, convert in (("bf16", lambda m: m.to(torch.bfloat16)), ("fp16", lambda m: m.half())):
        low, _ = build(transformers, arch)
        low = convert(low)
        try:
            out[name] = logits(low, seq2seq, ids)
            with torch.no_grad():
                generated = low.generate(ids[:, :16], max_new_tokens=4, do_sample=False, use_cache=True,
                                         pad_token_id=0)
            out[f"{name}-generate"] = tuple(generated.shape)
        except Exception as exc:  # recorded, judged by the test
            out[f"{name}-error"] = f"{type(exc).__name__}: {exc}"
    return out


def main(argv) -> int:
    warnings.filterwarnings("ignore")
    path, rest = argv[0], argv[1:]
    split = rest.index("--")
    modules, archs = rest[:split], rest[split + 1:]
    import transformers

    results: dict = {"version": transformers.__version__, "import-errors": {}, "archs": {}}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            results["import-errors"][name] = f"{type(exc).__name__}: {exc}"
    for arch in archs:
        if arch.split("-")[0] not in transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES:
            continue
        try:
            results["archs"][arch] = probe(transformers, arch)
        except Exception:
            results["archs"][arch] = {"build-error": traceback.format_exc(limit=3)}
    torch.save(results, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
