"""`nmt data get`: the raw parallel corpus that plays a table's task in a preset.

The preset names a corpus per task (`data.tasks.{task}.corpus`): `synth` is generated on the spot; any other
name is a corpus of the registry (nmt/data/corpora.yaml), fetched file by file from the mirror or the network
and verified (nmt.data.fetch). Either way the result is the same layout, `{split}.src` / `{split}.tgt` plus
`stats.json`, so every later stage is the same whatever the corpus.
"""
from __future__ import annotations

import json
from pathlib import Path

from .text import read_parallel, write_lines_atomic, write_text_atomic

SYNTH_OPTIONS = ("seed", "n_train", "n_dev", "n_test", "n_align", "max_len")


def get_task_corpus(config: dict, task: str, out_dir: str | Path, *, root: str | Path = ".",
                    downloads: str | Path = "data/downloads", allow_network: bool = True) -> dict:
    """Write the task's corpus into out_dir; returns the summary also written to out_dir/stats.json."""
    from ..config import corpus_for_task
    spec = corpus_for_task(config, task)
    out_dir = Path(out_dir)
    if spec["corpus"] == "synth":
        from . import synth
        return synth.generate(out_dir, **{k: spec[k] for k in SYNTH_OPTIONS if k in spec})
    return _registry_corpus(config, spec, out_dir, Path(root), Path(downloads), allow_network)


def _registry_corpus(config: dict, spec: dict, out_dir: Path, root: Path, downloads: Path,
                     allow_network: bool) -> dict:
    from .fetch import DEFAULT_CHECKSUMS, fetch_file
    data = config["data"]
    mirror = root / data["mirror"] if data.get("mirror") else None
    splits = spec.get("splits") or {}
    missing = [s for s in ("train", "dev", "test") if s not in splits]
    if missing:
        from ..config import ConfigError
        raise ConfigError(f"corpus {spec['corpus']!r}: data.tasks.*.splits lacks {', '.join(missing)}")
    summary = {"corpus": spec["corpus"], "mirror": data.get("mirror"), "splits": {}, "files": {}}
    for split, stem in splits.items():
        paths = []
        for lang in (spec["src_lang"], spec["tgt_lang"]):
            name = f"{stem}.{lang}"
            paths.append(fetch_file(spec["corpus"], name, downloads / spec["corpus"], mirror=mirror,
                                    checksums=DEFAULT_CHECKSUMS, allow_network=allow_network,
                                    accept_licence=data.get("accept_rwth_licence", False)))
            summary["files"][name] = str(paths[-1])
        src, tgt = read_parallel(*paths)
        if split == "train" and spec.get("max_train"):
            src, tgt = src[: spec["max_train"]], tgt[: spec["max_train"]]
        write_lines_atomic(out_dir / f"{split}.src", src)
        write_lines_atomic(out_dir / f"{split}.tgt", tgt)
        summary["splits"][split] = {"file_stem": stem, "sentences": len(src),
                                    "src_tokens": sum(len(s.split()) for s in src),
                                    "tgt_tokens": sum(len(t.split()) for t in tgt)}
    write_text_atomic(out_dir / "stats.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary
