"""What the workflow engines run: the DVC stages' variables (nmt.pipeline.dvc_vars)."""
