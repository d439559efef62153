"""The build's outcome, recorded in the home as its steps end (ledger/pipeline/build_record.py),
whether `ledger build` or `ledger up`'s daemon runs it: `ledger up`'s `/healthz` reads it."""

from dagster import HookContext, HookDefinition, failure_hook, success_hook

from ledger.pipeline.build_record import record_build


def build_outcome_hooks(published_op: str) -> set[HookDefinition]:
    """A failed step records the build as failed; the publication (`published_op`) as a success."""

    @failure_hook(required_resource_keys={"warehouse"})
    def build_failed(context: HookContext) -> None:
        error = context.op_exception
        why = f"{type(error).__name__}: {error}" if error is not None else "no error given"
        record_build(
            context.resources.warehouse.settings().home, False, f"step {context.step_key}: {why}"
        )

    @success_hook(required_resource_keys={"warehouse"})
    def build_published(context: HookContext) -> None:
        if context.op.name == published_op:
            record_build(context.resources.warehouse.settings().home, True)

    return {build_failed, build_published}
