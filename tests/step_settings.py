"""A training step's settings in a test: params.yaml's `train` section (every key: nmt.settings) with the test's own
values over it; CUDA graphs off unless the test asks for them."""

from pathlib import Path

import yaml

from nmt.settings import TrainSettings

PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"


def train_settings(**values) -> TrainSettings:
    defaults = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))["train"]
    return TrainSettings.from_dict({**defaults, "cuda_graphs": False, **values})
