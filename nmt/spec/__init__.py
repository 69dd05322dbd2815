"""The files a researcher writes to say what to run, read and checked here: the paper tables
(workflow/tables/*.yaml: nmt.spec.tables), the paper figures (workflow/figures/*.yaml: nmt.spec.figures), and
the JSON schemas of these and of params.yaml and its presets (schemas/; nmt.config validates params). Every
problem is an error naming the file and the key or row."""
