"""Install the pinned transformers releases that tests/test_real_models.py runs (needs PyPI).

Two releases cannot share one environment, so each goes into its own folder with
`pip install --no-deps --target build/real_models/<release>`, together with the versions of
tokenizers and huggingface_hub it needs; the dependencies they have in common go into the
current environment. The tests put one folder at a time on sys.path, in a subprocess, and never
touch the network. Running the script again skips releases that are already installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "build" / "real_models"

# A release from before the 2024 rotary fixes, and the newest one on PyPI (checked 2026-12-01).
RELEASES = {
    "transformers-4.36.2": ["transformers==4.36.2", "tokenizers==0.15.2", "huggingface_hub==0.20.3"],
    "transformers-5.24.0": ["transformers==5.24.0", "tokenizers==0.23.1", "huggingface_hub==1.31.0"],
}
# What both releases (and both huggingface_hub versions) import, installed into this environment.
SHARED = ["numpy", "regex", "pyyaml", "packaging", "filelock", "tqdm", "requests", "safetensors>=0.8",
          "fsspec", "httpx", "typer", "typing-extensions", "hf-xet"]


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q", *args],
                   check=True)


def main() -> int:
    pip(*SHARED)
    for name, requirements in RELEASES.items():
        folder = TARGET / name
        if (folder / "transformers" / "__init__.py").is_file():
            continue
        pip("--no-deps", "--target", str(folder), *requirements)
        print(f"installed {name} into {folder.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
