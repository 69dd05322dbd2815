# Every step of the plan as one rule, whose jobs' inputs, commands, settings and priorities are their records
# (nmt.pipeline.jobs: the same records dvc.yaml is written from). A rule adds only what is Snakemake's own: its
# threads and the device option of the cluster resources it asks for, the log, the timing files. A step whose
# jobs each write their own list of files (a corpus and its preparation: each task's corpus has its own splits)
# has one rule per job, named STEP_TASK (Job.rule).


def job_value(step, attribute):
    """A rule's input function: its job's record's attribute (the job found by the rule's wildcards)."""
    return lambda wildcards: getattr(JOBS.find(step, wildcards), attribute)


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
                job_value(_step.name, "inputs"),
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
                job_value(_step.name, "inputs"),
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
                    _job.inputs,
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
