"""Reproducibility pipeline for attention-based neural machine translation papers (Luong et al. 2015 and others)."""

from functools import lru_cache


@lru_cache(maxsize=1)
def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # (60 ms: looked up only when asked for)

    try:
        return version("nmt-repro")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0.0.0+source"


def __getattr__(name: str):
    if name == "__version__":  # computed on first use: every `nmt` command imports this package at its start
        return _installed_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
