"""A run's small files, copied out of its results directory: what a published reference run keeps
(docs/reproductions/PRESET/results) and what the report is rendered from again, without the models and
checkpoints.

A run made piece by piece (one seed on one machine, the next seed later) is exported one part at a time into the
same directory (nmt.config.plan.seed_part says which files are a seed's); the parts never share a file, so a
file that is already there with other content means two different runs, and is refused unless asked to replace it.

Every file of an export belongs to one run: a scores file names its preset, system, test set and pair, a model.json
its system, and its config the preset and the training's seed; one that names another (a tiny run's scores file in
results/demo, a seed-2 model.json where seed 1's belongs) or none (it cannot be told whose it is) is refused, naming
it, and so is a file of the preset's other parts already in the destination that names another preset. (metrics.jsonl
names nothing: the model.json beside it vouches for it by the digest of its epochs, nmt.training.records.) Nothing is written until every file has passed, and then the destination is replaced
whole (nmt.data.staging): a failure while copying (a full disk, a kill) leaves it as it was.
"""
from __future__ import annotations

from pathlib import Path

from .. import config as cfg
from ..base import layout
from ..data.staging import staged_directory
from ..data.text import write_bytes_atomic
from ..base.errors import InputError
from ..base.files import read_json, read_jsonl
from ..config.schema import validator
from ..config import plan
from ..training.records import DIGEST_KEY, check_metrics


def run_files(config: dict, root: str | Path, seeds: list[int] | None = None) -> list[str]:
    """The files of the given seeds' parts (all of the preset's seeds by default), as paths below the results
    directory (``en-de/scores/base.test.json``)."""
    prefix = layout.path(layout.RESULTS_ROOT, preset=config["preset"]) + "/"
    files: dict[str, None] = {}
    for seed in seeds or plan.preset_seeds(config):
        for path in plan.seed_part(config, root, seed):
            files[path[len(prefix):]] = None
    return list(files)


def export_run(config: dict, root: str | Path, results: str | Path, dest: str | Path,
               seeds: list[int] | None = None, replace: bool = False) -> dict[str, int]:
    """Copy the seeds' files from ``results`` (results/PRESET) to the same places below ``dest``.

    Every file is checked before any is copied: a file missing from ``results`` (the part is not finished), one
    of another run (``_Identity.check``), or one that ``dest`` holds with other content (unless ``replace``) is
    an InputError naming it, and nothing is written; then ``dest`` is replaced whole, with the new files.
    Returns {"copied": n, "unchanged": n}."""
    results, dest = Path(results), Path(dest)
    files = run_files(config, root, seeds)
    missing = [f for f in files if not (results / f).is_file()]
    if missing:
        raise InputError(f"{results / missing[0]}: missing ({len(missing)} of the {len(files)} files to export are); "
                         "finish the run first (`nmt seed-targets` names its files)")
    identity = _Identity(config, root)
    for f in files:
        identity.check(results / f, f, "nothing was exported")
    exported = set(files)
    for f in run_files(config, root):  # the other parts already there: of the same preset
        if f not in exported and (dest / f).is_file():
            identity.check(dest / f, f, "the destination holds another run's files; nothing was exported",
                           preset_only=True)
    unchanged = 0
    planned = []
    for f in files:
        data = (results / f).read_bytes()
        target = dest / f
        if target.is_file():
            if target.read_bytes() == data:
                unchanged += 1
                continue
            if not replace:
                raise InputError(f"{target}: already there with other content (another run's?); "
                                 "nothing was copied (--replace overwrites it)")
        planned.append((f, data))
    if planned:
        with staged_directory(dest, own=lambda entry: False) as staging:  # the rest of dest is kept
            for f, data in planned:
                write_bytes_atomic(staging / f, data)
    return {"copied": len(planned), "unchanged": unchanged}


class _Identity:
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
            raise InputError(f"{path}: trained on data {fingerprint}, but {first[1]} of the same pair on {first[0]}: "
                             f"another run's training; {consequence}")

    def check(self, path: Path, relative: str, consequence: str, preset_only: bool = False) -> None:
        """InputError naming ``path`` when what it records contradicts where it is (``relative``: below the results
        directory, task first) or the preset; files that record nothing (translations, metrics) pass."""
        parts = relative.split("/")
        if len(parts) == 3 and parts[1] == "scores" and parts[2].endswith(".json"):
            name, testset = parts[2][: -len(".json")].split(".", 1)
            data = read_json(path, "a scores file", schema=validator("scores"))
            expected = {"preset": self.preset} if preset_only else {"preset": self.preset, "system": name,
                                                                    "testset": testset, "pair": parts[0]}
            for key, want in expected.items():
                if data.get(key) is None:  # a file that does not say whose it is cannot join a run's part
                    raise InputError(f"{path}: records no {key}: whose run it is cannot be told; {consequence}")
                if data[key] != want:
                    raise InputError(f"{path}: its {key} is {data[key]!r}, not {want!r}: another run's scores file; "
                                     f"{consequence}")
        elif len(parts) == 4 and parts[1] == "models" and parts[3] == Path(layout.MODEL_INFO).name:
            data = read_json(path, "a model.json", schema=validator("model"))
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
                    raise InputError(f"{path}: records no {where.replace('its ', '', 1)}: whose run it is cannot be "
                                     f"told; {consequence}")
                if found[key] is not None and want[key] is not None and found[key] != want[key]:
                    raise InputError(f"{path}: {where} is {found[key]!r}, not {want[key]!r}: another run's "
                                     f"model.json; {consequence}")
        elif len(parts) == 4 and parts[1] == "models" and parts[3] == Path(layout.METRICS).name:
            model_json = path.with_name(Path(layout.MODEL_INFO).name)
            meta = read_json(model_json, "a model.json", schema=validator("model")) if model_json.is_file() else {}
            if meta.get(DIGEST_KEY) is not None:  # the epochs its training recorded, not another training's
                check_metrics(meta, read_jsonl(path, "a training's metrics", schema=validator("metrics")), path,
                              model_json)
