"""What a CUDA graph records (nmt.engine.graph_decoder) traced whole by torch.compile(fullgraph=True) on the CPU, for
every graphed model: some 10 s a model (the backward pass is traced too, with aot_eager), so a study, not a unit test."""

import pytest

from nmt.engine import cuda_graphs

from fast_models import (
    LUONG,
    assert_same_loss_and_gradients,
    batch,
    fast_model,
    name,
    plain_loss_and_gradients,
    recorded_loss_and_gradients,
)

GRAPHED = [o for o in LUONG if o.get("attention") in cuda_graphs.graphed() and o.get("input_feed", True)]


@pytest.mark.parametrize("overrides", GRAPHED, ids=name)
def test_what_a_graph_records_traces_whole_and_gives_the_fast_engines_loss_and_gradients(overrides):
    """torch.compile(fullgraph=True) fails at a host read (.item(), a size that depends on values) or a Python branch
    on a tensor's values: what a CUDA graph cannot record either. The traced step computes the ungraphed one."""
    model = fast_model(overrides).train()
    b = batch()
    traced = recorded_loss_and_gradients(model, b, compiled="aot_eager")
    assert_same_loss_and_gradients(traced, plain_loss_and_gradients(model, b))
