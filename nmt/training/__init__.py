"""The training layer: a system's training run, its live curves and progress lines."""
