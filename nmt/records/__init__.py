"""Every file a run writes and reads, one module per family (metrics, scores, model_info, report_files, headline,
benchmarks, parts, run_identity): where it lives (named from nmt.base.layout), its schema, its writer (whole or not
at all, nmt.base.atomic) and its reader (nmt.base.files, checked against the schema)."""
