"""The output layer and its loss in one pass: the summed negative log-likelihood of the target words under
log_softmax(features W^T + b), a chunk of rows at a time, without materialising [N, V] log-probabilities.
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch

# Elements of one chunk of logits: 8M floats (32 MB): on a CPU fewer, larger products were faster (a batch of the
# small preset, 768 target words x 10K words, in one chunk: 92 ms against 97 ms in two and 106 ms in eight); small
# next to a GPU's memory (167 rows of a 50K vocabulary).
CHUNK_ELEMENTS = 1 << 23


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    device = x.device.type
    if device in ("cuda", "cpu") and torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return x.dtype


class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, weight, bias, targets, ignore_index: int, chunk_rows: int):
        dtype = _compute_dtype(features)
        need_grad = any(ctx.needs_input_grad[:3])
        flat = features.reshape(-1, features.size(-1))
        flat_targets = targets.reshape(-1)
        keep = None
        if features.device.type == "cpu":
            # padding rows left out before any product (counting them is free on a CPU)
            rows = (flat_targets != ignore_index).nonzero().squeeze(1)
            x = flat.index_select(0, rows).to(dtype)
            y = flat_targets.index_select(0, rows)
        else:
            # on a GPU counting the rows would make the update wait for the device: every row is computed and the
            # padding rows' loss and gradients multiplied by 0
            rows = torch.arange(flat.size(0), device=flat.device)
            x, y = flat.to(dtype), flat_targets
            keep = (flat_targets != ignore_index).to(torch.float32)
        w = weight.to(dtype)
        b = None if bias is None else bias.float()
        loss = torch.zeros((), dtype=torch.float32, device=features.device)
        grad_x = torch.empty_like(x) if ctx.needs_input_grad[0] else None
        grad_w = grad_b = None
        buffer = _chunk_buffer(min(chunk_rows, x.size(0)), weight.size(0), features.device)
        with torch.autocast(features.device.type, enabled=False):
            for start in range(0, x.size(0), chunk_rows):
                xc, yc = x[start : start + chunk_rows], y[start : start + chunk_rows]
                logits = buffer[: xc.size(0)]
                if dtype == torch.float32:
                    if b is None:
                        torch.mm(xc, w.t(), out=logits)
                    else:
                        torch.addmm(b, xc, w.t(), out=logits)
                else:
                    logits.copy_(torch.mm(xc, w.t()))
                    if b is not None:
                        logits += b
                # log-sum-exp and softmax with three passes over the chunk, in place
                target = logits.gather(1, yc.unsqueeze(1)).squeeze(1)
                top = logits.amax(dim=1, keepdim=True)
                logits.sub_(top).exp_()
                total = logits.sum(dim=1, keepdim=True)
                row_loss = top.squeeze(1) + total.log().squeeze(1) - target
                kc = None if keep is None else keep[start : start + chunk_rows]
                loss += (row_loss if kc is None else row_loss * kc).sum()
                if not need_grad:
                    continue
                # d(lse - logit[y]) / d logits = softmax - onehot(y)
                logits.div_(total)
                logits.scatter_add_(1, yc.unsqueeze(1), logits.new_full((yc.numel(), 1), -1.0))
                if kc is not None:
                    logits.mul_(kc.unsqueeze(1))
                g = logits.to(dtype)
                if grad_x is not None:
                    torch.mm(g, w, out=grad_x[start : start + chunk_rows])
                if ctx.needs_input_grad[1]:
                    part = torch.mm(g.t(), xc)
                    grad_w = part.float() if grad_w is None else grad_w.add_(part)
                if b is not None and ctx.needs_input_grad[2]:
                    part = logits.sum(dim=0)
                    grad_b = part if grad_b is None else grad_b.add_(part)
        if need_grad:
            if grad_w is None and ctx.needs_input_grad[1]:  # no row to learn from (every target is padding)
                grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device)
            if grad_b is None and bias is not None and ctx.needs_input_grad[2]:
                grad_b = torch.zeros(bias.shape, dtype=torch.float32, device=bias.device)
            ctx.save_for_backward(
                rows,
                grad_x if grad_x is not None else torch.empty(0),
                grad_w if grad_w is not None else torch.empty(0),
                grad_b if grad_b is not None else torch.empty(0),
            )
            ctx.shapes = (features.shape, features.dtype, weight.dtype, None if bias is None else bias.dtype)
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        rows, grad_x, grad_w, grad_b = ctx.saved_tensors
        shape, x_dtype, w_dtype, b_dtype = ctx.shapes
        out_x = out_w = out_b = None
        if ctx.needs_input_grad[0]:
            flat = grad_x.new_zeros(shape.numel() // shape[-1], shape[-1])
            flat.index_copy_(0, rows, grad_x * grad_loss.to(grad_x.dtype))
            out_x = flat.view(shape).to(x_dtype)
        if ctx.needs_input_grad[1]:
            out_w = (grad_w * grad_loss).to(w_dtype)
        if ctx.needs_input_grad[2] and b_dtype is not None:
            out_b = (grad_b * grad_loss).to(b_dtype)
        return out_x, out_w, out_b, None, None, None


_buffers: dict = {}


def _chunk_buffer(rows: int, columns: int, device: torch.device) -> torch.Tensor:
    """An fp32 [rows, columns] scratch buffer for a chunk of logits, kept between calls: a fresh 16 MB tensor per
    update costs a CPU its page faults each time (about as much as a pass over it)."""
    if torch.device(device).type == "cuda" and torch.cuda.is_current_stream_capturing():
        # a CUDA graph being recorded (nmt.engine.cuda_graphs) gets a buffer of its own: a shared one would be freed
        # when a larger chunk replaces it, and the graph's replays would write into memory that is someone else's
        return torch.empty(rows, columns, device=device)
    key = (torch.device(device), columns)
    buffer = _buffers.get(key)
    if buffer is None or buffer.size(0) < rows:
        buffer = _buffers[key] = torch.empty(rows, columns, device=device)
    return buffer[:rows]


def linear_cross_entropy(
    features: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    targets: torch.Tensor,
    ignore_index: int,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> torch.Tensor:
    """Summed NLL of `targets` [...] under log_softmax(features [..., H] @ weight[V, H]^T + bias [V]); rows whose
    target is `ignore_index` count nothing. Equal to nll_loss(log_softmax(linear(...)), reduction='sum')."""
    chunk_rows = max(16, chunk_elements // max(weight.size(0), 1))
    return LinearCrossEntropy.apply(features, weight, bias, targets, ignore_index, chunk_rows)
