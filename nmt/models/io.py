"""Model and checkpoint files: what `nmt train` writes and every command reads (model.pt, checkpoint.pt).
Details: docs/internals/models.md."""

from __future__ import annotations

import json
import pickle
import re
import warnings
from pathlib import Path, PurePath
from typing import Any

import torch

from ..base.devices import pick_device
from ..base.errors import ConfigError, InputError, first_line
from ..data.torch_files import save_torch
from ..data.vocab import Vocab
from ..settings import VERSION, ModelSettings
from .ensemble import Ensemble
from .registry import build_model

MODEL_KEYS = ("model_config", "model", "src_vocab", "tgt_vocab", "config")
CHECKPOINT_KEYS = ("config", "model", "optimizer", "state")


# -- plain data -------------------------------------------------------------------------------------------------
def plain(obj: Any, where: str = "value") -> Any:
    """`obj` as the plain data that torch.load(weights_only=True) reads back: dicts with str keys, lists, str,
    int, float, bool, None and tensors. Tuples become lists, numpy scalars Python numbers, numpy arrays tensors,
    paths strings; anything else is a TypeError naming where it is (`where`: e.g. "state.metrics[0].lr")."""
    if obj is None or type(obj) in (bool, int, float, str):
        return obj
    if isinstance(obj, (bool, int, float, str)):  # a subclass (an IntEnum, a str subclass): the builtin value
        return _builtin(obj)
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"{where}: key {key!r} is a {type(key).__name__}, not a str or int")
            out[_builtin(key)] = plain(value, f"{where}.{key}")
        return out
    if isinstance(obj, (list, tuple)):
        return [plain(value, f"{where}[{i}]") for i, value in enumerate(obj)]
    if isinstance(obj, PurePath):
        return obj.as_posix()
    module = type(obj).__module__.split(".")[0]
    if module == "numpy":
        if getattr(obj, "shape", None) == ():  # a numpy scalar (np.float64, np.int64, np.bool_, 0-d array)
            return plain(obj.item(), where)
        if hasattr(obj, "shape") and hasattr(obj, "dtype"):
            return torch.from_numpy(obj.copy())
    raise TypeError(
        f"{where}: a {type(obj).__module__}.{type(obj).__qualname__} cannot go into a model or "
        "checkpoint file (plain data only: dict, list, str, int, float, bool, None, tensor)"
    )


def _builtin(value):
    """A subclass of bool/int/float/str (an IntEnum, a str subclass) as the builtin value itself."""
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


# -- reading ----------------------------------------------------------------------------------------------------
#: what each key of a model or checkpoint file holds (nmt writes nothing else; a file edited or written elsewhere is
#: refused at the boundary, naming the key, instead of failing deep inside a command)
_EXPECTED = {
    "model_config": "a dict",
    "model": "a state dict",
    "src_vocab": "a list of words",
    "tgt_vocab": "a list of words",
    "config": "a dict",
    "system": "a string",
    "config_version": "an integer",
    "optimizer": "a dict",
    "state": "a dict",
}
_STATE_KEYS = {"epoch": int, "batch": int, "updates": int, "metrics": list}


def _a(value: Any) -> str:
    """A value's type in words: "a list", "an int"."""
    kind = type(value).__name__
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def _type_problem(key: str, value: Any) -> str | None:
    """What is wrong with `value` as the file's `key` (e.g. "tgt_vocab is a str, not a list of words"), or None."""
    expected = _EXPECTED[key]
    if expected in ("a dict", "a state dict") and not isinstance(value, dict):
        return f"{key} is {_a(value)}, not {expected}"
    if expected == "a state dict":
        for param, tensor in value.items():
            if not isinstance(param, str) or not isinstance(tensor, torch.Tensor):
                return f"{key} is not a state dict ({param!r} holds {_a(tensor)}, not a tensor)"
    if expected == "a list of words":
        if not isinstance(value, list):
            return f"{key} is {_a(value)}, not a list of words"
        for position, word in enumerate(value):
            if not isinstance(word, str):
                return f"{key}[{position}] is {_a(word)}, not a word (a string)"
    if expected == "a string" and not isinstance(value, str):
        return f"{key} is {_a(value)}, not a string"
    if expected == "an integer" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"{key} is {_a(value)}, not an integer"
    return None


def _state_problem(state: dict, complete: bool) -> str | None:
    """What is wrong with a checkpoint's `state` (its position and its metrics: each of the wrong type, or with
    `complete` missing, as a training that resumes from it needs them all), or None."""
    for name, kind in _STATE_KEYS.items():
        if name not in state:
            if complete:
                return f"state has no {name}"
            continue
        if not isinstance(state[name], kind) or isinstance(state[name], bool):
            return f"state.{name} is {_a(state[name])}, not {'a list' if kind is list else 'an integer'}"
    return None


def read_file(
    path: str | Path, kind: str, keys: tuple[str, ...], *, context: str = "", remedy: str, mmap: bool = False
) -> dict:
    """The dict in a file nmt wrote, read with torch.load(weights_only=True) onto the CPU; `kind` names what it
    should be (e.g. "model file") and `keys` what it must hold, each key of the file its type (_EXPECTED: a
    vocabulary a list of strings, a state dict tensors, ...). Any failure is one ConfigError line that starts with
    `context` (e.g. "train.init_from: "), names the file (and the key) and ends with `remedy` (what to do).
    `mmap`: the tensors mapped from the file rather than read (a look at a large file's config)."""
    path = Path(path)
    name = f"{context}{path}"
    if not path.exists():
        raise ConfigError(f"{name}: no such file; {remedy}")
    if path.is_dir():
        raise ConfigError(f"{name} is a directory, not a {kind}")
    try:
        with warnings.catch_warnings():  # e.g. about a foreign pickle's protocol: the error below says more
            warnings.simplefilter("ignore", UserWarning)
            blob = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as err:
        if "weights only" not in str(err).lower():
            raise ConfigError(f"{name}: not a readable {kind} ({first_line(err)}); {remedy}") from None
        found = re.search(r"GLOBAL ([\w.]+)", str(err))
        what = f"a pickled {found.group(1)}" if found else "pickled Python objects"
        raise ConfigError(
            f"{name}: refused: it holds {what} (written by other software or an older nmt), and "
            f"nmt reads only plain data (tensors, numbers, strings, lists, dicts; torch.load "
            f"weights_only=True), so that no file can run code; {remedy}"
        ) from None
    except MemoryError:
        raise
    except PermissionError as err:
        raise ConfigError(f"{name}: cannot be read ({err.strerror or err})") from None
    except Exception as err:  # torch.load's errors for truncated and foreign files: RuntimeError, EOFError, OSError..
        detail = type(err).__name__ + (f": {first_line(err)}" if first_line(err) else "")
        raise ConfigError(
            f"{name}: not a readable {kind} (truncated, corrupt or not written by nmt train: {detail}); {remedy}"
        ) from None
    if not isinstance(blob, dict):
        raise ConfigError(f"{name}: not a {kind} written by nmt train (it holds {_a(blob)}, not a dict); {remedy}")
    missing = [key for key in keys if key not in blob]
    if missing:
        raise ConfigError(f"{name}: not a {kind} written by nmt train (it has no {', '.join(missing)}); {remedy}")
    problem = next((p for p in (_type_problem(key, blob[key]) for key in _EXPECTED if key in blob) if p), None)
    if problem:
        raise ConfigError(f"{name}: not a {kind} written by nmt train (its {problem}); {remedy}")
    # its settings' version (none: 1); older ones are upgraded where they are read (nmt.settings.upgrade)
    if blob.get("config_version", 1) > VERSION:
        raise ConfigError(
            f"{name}: written by a newer nmt (settings version {blob['config_version']}; this one reads "
            f"up to {VERSION}); update nmt to read it"
        )
    return blob


# -- model.pt -----------------------------------------------------------------------------------------------------
def save_model(
    path: str | Path,
    model: torch.nn.Module,
    src_vocab: Vocab | list[str],
    tgt_vocab: Vocab | list[str],
    config: dict,
    *,
    system: str = "system",
    model_config: dict | None = None,
) -> None:
    """model.pt: everything `load_model` needs to translate (parameters, vocabularies, configs)."""
    blob = {
        "model_config": plain(config["model"] if model_config is None else model_config, "model_config"),
        "model": model.state_dict(),
        "src_vocab": plain(list(getattr(src_vocab, "itos", src_vocab)), "src_vocab"),
        "tgt_vocab": plain(list(getattr(tgt_vocab, "itos", tgt_vocab)), "tgt_vocab"),
        "config": plain(config, "config"),
        "system": str(system),
        "config_version": VERSION,
    }
    save_torch(blob, Path(path))


MODEL_REMEDY = "give a model.pt that `nmt train` wrote (retrain the system with it)"


def read_model_file(path: str | Path, *, remedy: str = MODEL_REMEDY, mmap: bool = False) -> dict:
    """The contents of a model.pt (plain data, tensors on the CPU); ConfigError when it is none."""
    return read_file(path, "model file", MODEL_KEYS, remedy=remedy, mmap=mmap)


def load_model(path: str | Path, device: str | torch.device | None = None):
    """(model in eval mode, src Vocab, tgt Vocab, config) from a model.pt written by `nmt train`; the model on
    `device` (cpu, cuda, cuda:1; default: a free GPU when there is one, nmt.base.devices.pick_device)."""
    blob = read_model_file(path)
    dev = device if isinstance(device, torch.device) else pick_device(device)
    src_vocab, tgt_vocab = Vocab(blob["src_vocab"]), Vocab(blob["tgt_vocab"])
    missing = ModelSettings.missing_keys(blob["model_config"])
    if missing:  # a model_config written by other software, or edited by hand
        raise ConfigError(f"{path}: its model_config has no {missing[0]!r}; {MODEL_REMEDY}")
    try:
        # upgraded once, here: a model file's settings as whatever version wrote them
        model = build_model(ModelSettings.from_dict(blob["model_config"]), len(src_vocab), len(tgt_vocab))
    except (TypeError, ValueError, AttributeError) as err:
        raise ConfigError(f"{path}: its model_config cannot be built ({first_line(err)}); {MODEL_REMEDY}") from None
    try:
        model.load_state_dict(blob["model"])
    except RuntimeError as err:  # parameters that do not fit the architecture its model_config describes
        raise ConfigError(
            f"{path}: its parameters do not match its model_config ({first_line(err)}); {MODEL_REMEDY}"
        ) from None
    model.source_path = str(path)  # named by errors, e.g. a target foresight model asked to translate
    model.to(dev).eval()
    return model, src_vocab, tgt_vocab, blob["config"]


# -- checkpoint.pt ------------------------------------------------------------------------------------------------
def save_checkpoint(
    path: str | Path, config: dict, model: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict
) -> None:
    """checkpoint.pt: what a rerun of the same training resumes from. `state` (position, metrics so far, RNG
    states) must be plain data; a value that is not is a TypeError naming it, before anything is written."""
    save_torch(
        {
            "config": plain(config, "config"),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "state": plain(state, "state"),
            "config_version": VERSION,
        },
        Path(path),
    )


def load_checkpoint(path: str | Path, *, resume: bool = False) -> dict:
    """The contents of a checkpoint.pt, tensors on the CPU (load_state_dict puts them where the model and the
    optimiser are); ConfigError when it cannot be read (`resume`: also when its state lacks what a training resumes
    from: epoch, batch, updates, metrics)."""
    remedy = "move it away (or delete it) and rerun to train from the start"
    blob = read_file(path, "checkpoint", CHECKPOINT_KEYS, remedy=remedy)
    problem = _state_problem(blob["state"], complete=resume)
    if problem:
        raise ConfigError(f"{path}: not a checkpoint written by nmt train (its {problem}); {remedy}")
    return blob


def read_init_from(path: str | Path) -> dict:
    """What train.init_from starts from, out of a model.pt or a checkpoint.pt: {"model": state dict,
    "model_config": dict, "src_vocab"/"tgt_vocab": lists of words, or None for a checkpoint (which has none)}."""
    context, remedy = "train.init_from: ", "name a model.pt or checkpoint.pt that nmt train wrote"
    blob = read_file(path, "model.pt or checkpoint.pt", ("model",), context=context, remedy=remedy)
    if not isinstance(blob["model"], dict) or not all(isinstance(v, torch.Tensor) for v in blob["model"].values()):
        raise ConfigError(
            f"{context}{path}: not a model.pt or checkpoint.pt written by nmt train (its `model` is no "
            f"state dict); {remedy}"
        )
    model_config = blob.get("model_config") or (blob.get("config") or {}).get("model") or {}
    return {
        "model": blob["model"],
        "model_config": model_config,
        "src_vocab": blob.get("src_vocab"),
        "tgt_vocab": blob.get("tgt_vocab"),
    }


# -- RNG states -----------------------------------------------------------------------------------------------------
def on_cuda(device: str | torch.device) -> bool:
    return torch.device(device).type == "cuda"


def rng_states(device: str | torch.device) -> dict:
    """The RNG states a checkpoint keeps, so that a resumed epoch draws the same dropout masks: the CPU
    generator's ("rng") always, and ("cuda_rng") the generator of the run's device when it computes on CUDA,
    which is the one dropout draws from there; None on the CPU (so that the state of a GPU run resumed on a CPU
    does not linger in the next checkpoint)."""
    return {"rng": torch.get_rng_state(), "cuda_rng": torch.cuda.get_rng_state(device) if on_cuda(device) else None}


def restore_rng_states(state: dict, device: str | torch.device) -> str | None:
    """Set the generators from a checkpoint's `state` (as `rng_states` stored them) for a run on `device`.
    Returns None when the resumed run continues exactly, else a line saying why it does not.

    The CPU state is restored everywhere. The CUDA state is restored only on CUDA, into the run's own device.
    A checkpoint and a resumed run on different kinds of device still resume, but not exactly: a checkpoint
    written on a CPU (or by an nmt that kept no CUDA state) resumed on a GPU draws the rest of its epoch's
    dropout from the CUDA generator as seeded at the start of this run, and a GPU checkpoint resumed on a CPU
    draws it from the CPU generator, which the GPU run had not used for dropout. The next epoch reseeds every
    generator (torch.manual_seed(seed * 1000 + epoch)), yet the parameters already differ from an uninterrupted
    run's, as they would anyway between devices (different kernels, different rounding)."""
    torch.set_rng_state(state["rng"].cpu())  # the generators take their state as a CPU ByteTensor
    saved = state.get("cuda_rng")
    if on_cuda(device):
        if saved is None:
            return (
                "the checkpoint has no CUDA RNG state (written on a CPU, or by an older nmt): the rest of this "
                "epoch is not bit-identical to an uninterrupted run"
            )
        torch.cuda.set_rng_state(saved.cpu(), device)
        return None
    if saved is not None:
        return (
            "the checkpoint was written on a GPU and this run is on the CPU: the rest of this epoch is not "
            "bit-identical to an uninterrupted run"
        )
    return None


__all__ = [
    "CHECKPOINT_KEYS",
    "MODEL_KEYS",
    "load_checkpoint",
    "load_model",
    "on_cuda",
    "plain",
    "read_file",
    "read_init_from",
    "read_model_file",
    "restore_rng_states",
    "rng_states",
    "save_checkpoint",
    "save_model",
]


def _run_of(config: dict) -> dict:
    """What makes models of one run: the preset, the corpora and their preparation (not where the data lives)."""
    return {
        "preset": config.get("preset"),
        "corpora": (config.get("data") or {}).get("tasks"),
        "preparation": config.get("prepare"),
    }


def _brief(value, width: int = 60) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def load_models(paths: list[str], device=None, combine: str = "prob"):
    """One model, or an ensemble of several: (model, src Vocab, tgt Vocab, config of the first).

    Ensemble members must be of one run (the preset, and the corpus and preparation they were trained on) and
    share both vocabularies, since they read the same source ids and their distributions are combined word by word;
    a mismatch names the offending file."""
    loaded = [load_model(path, device) for path in paths]
    model, src_vocab, tgt_vocab, config = loaded[0]
    if len(loaded) == 1:
        return model, src_vocab, tgt_vocab, config
    for path, (_, src_v, tgt_v, member_config) in zip(paths[1:], loaded[1:]):
        mine, first = _run_of(member_config), _run_of(config)
        for key in mine:
            if mine[key] != first[key]:
                raise InputError(
                    f"{path}: its {key} differs from that of {paths[0]} "
                    f"({_brief(mine[key])} vs {_brief(first[key])}); "
                    "ensemble members must be trained by one run"
                )
        for side, mine, first in (("source", src_v, src_vocab), ("target", tgt_v, tgt_vocab)):
            if mine.itos != first.itos:
                raise InputError(
                    f"{path}: its {side} vocabulary differs from that of {paths[0]} "
                    f"({len(mine)} vs {len(first)} words); ensemble members must share vocabularies"
                )
    return Ensemble([m for m, *_ in loaded], combine), src_vocab, tgt_vocab, config
