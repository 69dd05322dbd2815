"""What the workflow engines run: dvc.yaml generated from the preset's plan (nmt.pipeline.dvc_yaml)."""
