# For Snakemake users: no rule here is written by hand for its step. Each rule is made from one step of
# nmt.pipeline.jobs.STEPS (its name, its output, log and timing patterns from nmt/base/layout.py, whose fields are
# the wildcards), and each of its jobs is a record that nmt.pipeline.jobs.build_jobs made from the preset's table,
# figure and claims files (JOBS, built in workflow/rules/common.smk): its input and output files, its `nmt` commands,
# the settings it reads (params.settings: a job reruns when they change) and its priority. A rule's input and params
# functions look its job up by the wildcards (JOBS.find). To read them: `snakemake -n -p TARGET` prints a job's
# commands, `snakemake --list-rules` the steps, `nmt COMMAND --help` what a command does; dvc.yaml holds the same
# records as DVC stages.
#
# A rule adds only what is Snakemake's own: its threads and the device option of the cluster resources it asks for,
# the log, the timing files. A step whose jobs each write their own list of files (a corpus and its preparation:
# each task's corpus has its own splits) has one rule per job, named STEP_TASK (Job.rule).


def job_value(step, attribute):
    """A rule's input function: its job's record's attribute (the job found by the rule's wildcards)."""
    return lambda wildcards: getattr(JOBS.find(step, wildcards), attribute)


def inputs_of(job):
    """A job's inputs, those it reads some keys of (a training's table file) as `ancient`: their time reruns
    nothing, the settings param reruns it when its keys change (another row or system of the table: nothing)."""
    return [ancient(path) if path in job.keyed_inputs else path for path in job.inputs]


def job_inputs(step):
    """A rule's input function: its job's inputs (inputs_of)."""
    return lambda wildcards: inputs_of(JOBS.find(step, wildcards))


def job_command(step):
    """The job's commands, with the rule's threads (where they take --threads) and the device option of its kind's
    resources. A step whose commands take no --threads does not ask for the rule's: a speed measurement's threads
    are the run's cores, which `snakemake --report` has none of."""
    if step.threads:
        return lambda wildcards, threads: JOBS.find(step.name, wildcards).shell(threads, DEVICE[step.kind])
    return lambda wildcards: JOBS.find(step.name, wildcards).shell(1, DEVICE[step.kind])


def rule_outputs(step):
    if step.name == "report":  # the whole directory, so that `snakemake --report` carries the page and its files
        return {name: report(directory(pattern), htmlindex="index.html", category="Paper tables and claims",
                             caption="../report/tables.rst") for name, pattern in step.outputs.items()}
    return {name: directory(pattern) if step.directory else pattern for name, pattern in step.outputs.items()}


# Snakemake's `benchmark:` takes no None, so the steps that time their jobs (training, decoding) have a rule of
# their own; it differs from the other in that line (and no speed measurement times its job that way).
for _step in nmtjobs.STEPS.values():
    if _step.outputs and _step.timing:

        rule:
            name:
                _step.name
            input:
                job_inputs(_step.name),
            output:
                **rule_outputs(_step),
            params:
                settings=job_value(_step.name, "settings"),  # Snakemake reruns a job whose settings change
                command=job_command(_step),
            wildcard_constraints:
                **JOBS.constraints(_step.name),
            threads: 1
            resources:
                **RESOURCES[_step.kind],
            priority: job_value(_step.name, "priority")
            log:
                _step.log,
            benchmark:
                _step.timing
            shell:
                "{params.command} > {log} 2>&1"

    elif _step.outputs:

        rule:
            name:
                _step.name
            input:
                job_inputs(_step.name),
            output:
                **rule_outputs(_step),
            params:
                settings=job_value(_step.name, "settings"),
                command=job_command(_step),
            wildcard_constraints:
                **JOBS.constraints(_step.name),
            # a speed measurement asks for every core the run was given (evaluated per job: a cluster run has no
            # total), so that nothing runs beside it; its command still times one thread
            threads: (lambda wildcards: workflow.cores) if _step.exclusive else 1
            resources:
                **RESOURCES[_step.kind],
            priority: job_value(_step.name, "priority")
            log:
                _step.log,
            shell:
                "{params.command} > {log} 2>&1"

    else:
        for _job in JOBS.of(_step.name):

            rule:
                name:
                    _job.rule
                input:
                    inputs_of(_job),
                output:
                    _job.outputs,
                params:
                    settings=_job.settings,
                    command=_job.shell(1, DEVICE[_step.kind]),
                resources:
                    **RESOURCES[_step.kind],
                priority: _job.priority
                log:
                    _job.log,
                shell:
                    "{params.command} > {log} 2>&1"
