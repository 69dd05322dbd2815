"""A run's parts (one seed's files, nmt.config.plan.seed_part) and whose run a file of a part is: a scores file
names its preset, system, test set and pair, a model info its system, and its config the preset and the training's
seed; a metrics file names nothing, and the model info beside it vouches for it by the digest of its epochs.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from .. import config as cfg
from ..base import layout
from ..base.errors import InputError
from ..config import plan
from . import metrics, model_info, scores

MODELS_DIR_NAME = PurePosixPath(layout.MODELS).name


def run_files(config: dict, root: str | Path, seeds: list[int] | None = None) -> list[str]:
    """The files of the given seeds' parts (all of the preset's seeds by default), as paths below the results
    directory, task first."""
    prefix = layout.path(layout.RESULTS_ROOT, preset=config["preset"]) + "/"
    files: dict[str, None] = {}
    for seed in seeds or plan.preset_seeds(config):
        for path in plan.seed_part(config, root, seed):
            files[path[len(prefix) :]] = None
    return list(files)


class PartIdentity:
    """What the files of one run say they are: the preset, and for each file its system, test set, pair and seed."""

    def __init__(self, config: dict, root: str | Path):
        self.preset, self.config, self.root = config["preset"], config, Path(root)
        self.trained = plan.collect_systems(config, root)
        self._tables: dict[str, dict] = {}
        self.data: dict[str, tuple[str, Path]] = {}  # pair: the prepared data its first training recorded, and where

    def seed(self, task: str, run: str) -> int | None:
        """The seed the plan trains ``run`` of ``task`` with (its train.seed), None for a name it does not train."""
        table_path = self.trained.get(task, {}).get(run)
        if table_path is None:
            return None
        if table_path not in self._tables:
            self._tables[table_path] = cfg.load_table(self.root / table_path)
        return cfg.system_config(self.config, self._tables[table_path], run, table_path)["train"].get("seed")

    def check_data(self, pair: str, meta: dict, path: Path, consequence: str) -> None:
        """InputError when a training of ``pair`` recorded other prepared data than the pair's other trainings (the
        part's and the other parts' there): two runs' trainings in one reference. One that records none passes."""
        fingerprint = (meta.get("data") or {}).get("fingerprint")
        if fingerprint is None:
            return
        first = self.data.setdefault(pair, (fingerprint, path))
        if first[0] != fingerprint:
            raise InputError(
                f"{path}: trained on data {fingerprint}, but {first[1]} of the same pair on {first[0]}: "
                f"another run's training; {consequence}"
            )

    def check(self, path: Path, relative: str, consequence: str, preset_only: bool = False) -> None:
        """InputError naming ``path`` when what it records contradicts where it is (``relative``: below the results
        directory, task first) or the preset; files that record nothing (translations, metrics) pass."""
        parts = relative.split("/")
        if len(parts) == 3 and parts[1] == scores.DIR_NAME and parts[2].endswith(".json"):
            self._check_scores(path, parts, consequence, preset_only)
        elif len(parts) == 4 and parts[1] == MODELS_DIR_NAME and parts[3] == model_info.NAME:
            self._check_model_info(path, parts, consequence, preset_only)
        elif len(parts) == 4 and parts[1] == MODELS_DIR_NAME and parts[3] == metrics.NAME:
            info_path = path.with_name(model_info.NAME)
            meta = model_info.read_model_info(info_path) if info_path.is_file() else {}
            if meta.get(metrics.DIGEST_KEY) is not None:  # the epochs its training recorded, not another training's
                metrics.check_metrics(meta, metrics.read_epochs(path), path, info_path)

    def _check_scores(self, path: Path, parts: list[str], consequence: str, preset_only: bool) -> None:
        name, testset = parts[2][: -len(".json")].split(".", 1)
        data = scores.read_scores(path)
        expected = (
            {"preset": self.preset}
            if preset_only
            else {"preset": self.preset, "system": name, "testset": testset, "pair": parts[0]}
        )
        for key, want in expected.items():
            if data.get(key) is None:  # a file that does not say whose it is cannot join a run's part
                raise InputError(f"{path}: records no {key}: whose run it is cannot be told; {consequence}")
            if data[key] != want:
                raise InputError(
                    f"{path}: its {key} is {data[key]!r}, not {want!r}: another run's scores file; {consequence}"
                )

    def _check_model_info(self, path: Path, parts: list[str], consequence: str, preset_only: bool) -> None:
        data = model_info.read_model_info(path)
        config = data.get("config") if isinstance(data.get("config"), dict) else {}
        train = config.get("train") if isinstance(config.get("train"), dict) else {}
        found = {"preset": config.get("preset")}
        want = {"preset": self.preset}
        if not preset_only:
            found.update(system=data.get("system"), seed=train.get("seed"))
            want.update(system=parts[2], seed=self.seed(parts[0], parts[2]))
        self.check_data(parts[0], data, path, consequence)
        for key in found:
            where = {"system": "its system", "seed": "its config's train.seed"}.get(key, f"its config's {key}")
            if want[key] is not None and found[key] is None:
                raise InputError(
                    f"{path}: records no {where.replace('its ', '', 1)}: whose run it is cannot be told; {consequence}"
                )
            if found[key] is not None and want[key] is not None and found[key] != want[key]:
                raise InputError(
                    f"{path}: {where} is {found[key]!r}, not {want[key]!r}: another run's "
                    f"{model_info.NAME}; {consequence}"
                )
