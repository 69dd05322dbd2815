"""What the workflow engines run: the preset's plan (nmt.config.plan), which the Snakefile reads, and the DVC
stage files generated from it (nmt.pipeline.dvc_yaml)."""
