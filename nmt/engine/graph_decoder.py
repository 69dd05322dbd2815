"""The input-feeding decoder's loss in plain torch operations under autograd: what a CUDA graph records
(nmt.engine.cuda_graphs).
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..data.vocab import PAD_ID
from ..models.dropout import dropout


class FeedDecoderLoss(nn.Module):
    """loss(memory, mask, h, c, tgt_in, tgt_out[, keys]) -> the summed NLL of a teacher-forced batch given the
    encoder's output (cuda_graphs.decoder_inputs), for a Seq2Seq model with input feeding; under autocast to `dtype`
    when given (None: fp32).

    The decoder's parameters are read from its nn.LSTM once, here (torch.compile refuses to trace an nn.LSTM module,
    even to read its attributes; moving the model to a device keeps its parameter objects)."""

    def __init__(self, model: nn.Module, dtype: torch.dtype | None):
        super().__init__()
        self.model, self.dtype = model, dtype
        lstm = model.decoder
        # per layer (w_ih, w_hh, b_ih, b_hh): a plain list, not registered again (they are the model's parameters)
        self.cells = [tuple(weights) for weights in lstm.all_weights]
        self.between = lstm.dropout  # between the LSTM layers

    def forward(self, memory, mask, h, c, tgt_in, tgt_out, *keys):
        device = memory.device.type
        with torch.autocast(
            device, dtype=self.dtype or torch.float32, enabled=self.dtype is not None, cache_enabled=False
        ):  # a graph cannot keep autocast's cache of cast weights
            with torch.autocast(device, enabled=False):
                htilde = self.decode(
                    memory.float(), mask, h.float(), c.float(), tgt_in, keys[0].float() if keys else None
                )
            model = self.model
            logits = model.generator(dropout(htilde, model.dropout.p, model.training, fast=False))
            return F.cross_entropy(
                logits.flatten(0, 1).float(), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
            )

    def decode(self, memory, mask, h, c, tgt_in, keys):
        """htilde [B, T, H]: the stacked LSTM one step at a time, its input [y_{t-1} ; htilde_{t-1}], its top state
        the attention's query (Seq2Seq.decode_states with input feeding)."""
        model, training = self.model, self.model.training
        emb = dropout(model.tgt_embed(tgt_in), model.dropout.p, training, fast=False)
        hidden, cell = list(h.unbind(0)), list(c.unbind(0))
        feed = memory.new_zeros(memory.size(0), memory.size(2))
        steps = torch.arange(tgt_in.size(1), device=memory.device)  # the target positions (local-m aligns to them)
        outputs = []
        for t in range(tgt_in.size(1)):
            x = torch.cat([emb[:, t], feed], dim=1)
            for layer, weights in enumerate(self.cells):
                if layer > 0:
                    x = dropout(x, self.between, training, fast=False)
                hidden[layer], cell[layer] = torch.lstm_cell(x, (hidden[layer], cell[layer]), *weights)
                x = hidden[layer]
            htilde, _ = model.attention(x.unsqueeze(1), memory, keys, mask, steps[t : t + 1])
            feed = htilde.squeeze(1)
            outputs.append(feed)
        return torch.stack(outputs, dim=1)
