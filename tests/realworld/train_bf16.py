#!/usr/bin/env python
"""Train the decoder with bf16 autocast, gradient accumulation and a warmup-then-cosine
learning rate; write a checkpoint every few hundred steps. Importing this file does nothing."""
import argparse
import math
import os
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from decoder_lm import DecoderConfig, DecoderForCausalLM

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def learning_rate(step, peak=6e-4, floor=6e-5, warmup=2000, total=600000):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return floor + (peak - floor) * (1 + math.cos(math.pi * progress)) / 2


def options(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="checkpoints")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=100000)
    parser.add_argument("--accumulate", type=int, default=16)
    parser.add_argument("--precision", choices=sorted(DTYPES), default="bfloat16")
    parser.add_argument("--compile", action="store_true")
    return parser.parse_args(argv)


def setup_device():
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group("nccl")
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
        return device, dist.get_rank() == 0, True
    return torch.device("cuda" if torch.cuda.is_available() else "cpu"), True, False


def main(argv=None):
    args = options(argv)
    device, is_main, distributed = setup_device()
    dtype = DTYPES[args.precision]
    amp = nullcontext() if device.type == "cpu" else torch.autocast(device.type, dtype=dtype)
    model = DecoderForCausalLM(DecoderConfig(max_position_embeddings=args.context)).to(device)
    if args.compile:
        model = torch.compile(model)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[device.index])
    scaler = torch.cuda.amp.GradScaler(enabled=dtype is torch.float16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate(0), betas=(0.9, 0.95), weight_decay=0.1)
    if is_main:
        os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step)
        for _ in range(args.accumulate):
            tokens = torch.randint(0, 32000, (args.batch, args.context + 1), device=device)
            with amp:
                loss = model(tokens[:, :-1], labels=tokens) / args.accumulate
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if is_main and step % 250 == 0:
            elapsed = time.monotonic() - started
            print(f"step {step:>7}  loss {loss.item() * args.accumulate:.4f}  {elapsed:8.1f}s", flush=True)
            torch.save({"model": model.state_dict(), "step": step}, os.path.join(args.out, "last.pt"))
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
