"""Recurrent layers as single ops while a reference is traced or run on the meta device.

``nn.LSTM``/``nn.GRU``/``nn.RNN`` call ``aten.lstm``/``gru``/``rnn_tanh``/``rnn_relu``, which have no meta or
fake kernel of their own: on the meta device and under ``torch.export`` they run their decomposition, one op
per gate per time step. A 6-layer bidirectional GRU over 512 steps took about 24 s per meta forward and 100 s
to export, before any kernel existed. Inside :func:`whole_recurrences` the layers call ``kernelevolve::lstm``
(and the others) instead: custom ops with the same arguments, whose fake (and meta) implementation only
computes output shapes and whose real one calls the ATen op. Exported graphs then hold one node per layer
stack, which the lowering's recurrence template takes whole.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import torch
from torch.nn.modules import rnn as _rnn_module

_REAL_VF = _rnn_module._VF
_lock = threading.Lock()
_depth = [0]


def _shapes(x: torch.Tensor, h0: torch.Tensor, bidirectional: bool, batch_first: bool) -> tuple[int, ...]:
    steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    features = (2 if bidirectional else 1) * h0.shape[-1]
    return (batch, steps, features) if batch_first else (steps, batch, features)


@torch.library.custom_op("kernelevolve::lstm", mutates_args=())
def lstm(input: torch.Tensor, hx: list[torch.Tensor], params: list[torch.Tensor], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool, batch_first: bool
         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    out, h, c = _REAL_VF.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return out, h.clone(), c.clone()  # a custom op's outputs may not alias each other


@lstm.register_fake
def _lstm_fake(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):  # noqa: ANN001, ANN202
    out = input.new_empty(_shapes(input, hx[0], bidirectional, batch_first))
    return out, hx[0].new_empty(hx[0].shape), hx[1].new_empty(hx[1].shape)


def _single_state(name: str) -> Any:
    """``kernelevolve::gru``/``rnn_tanh``/``rnn_relu``: one hidden state, no cell."""

    def real(input: torch.Tensor, hx: torch.Tensor, params: list[torch.Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool, batch_first: bool
             ) -> tuple[torch.Tensor, torch.Tensor]:
        out, h = getattr(_REAL_VF, name)(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                                         batch_first)
        return out, h.clone()

    op = torch.library.custom_op(f"kernelevolve::{name}", real, mutates_args=())

    @op.register_fake
    def _fake(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):  # noqa: ANN001, ANN202
        return input.new_empty(_shapes(input, hx, bidirectional, batch_first)), hx.new_empty(hx.shape)

    return op


gru, rnn_tanh, rnn_relu = (_single_state(n) for n in ("gru", "rnn_tanh", "rnn_relu"))
_OPS = {"lstm": lstm, "gru": gru, "rnn_tanh": rnn_tanh, "rnn_relu": rnn_relu}


class _VFShim:
    """``torch._VF`` as ``nn.RNNBase`` sees it, with the padded-input forms of the four recurrences routed to
    the custom ops (a packed sequence, whose second argument is the batch sizes, keeps the ATen op)."""

    def __getattr__(self, name: str) -> Any:
        real = getattr(_REAL_VF, name)
        op = _OPS.get(name)
        if op is None:
            return real

        def call(*args: Any) -> Any:
            if len(args) == 9 and isinstance(args[2], (list, tuple)):
                return op(args[0], list(args[1]) if name == "lstm" else args[1], list(args[2]), *args[3:])
            return real(*args)

        return call


@contextlib.contextmanager
def whole_recurrences() -> Iterator[None]:
    """Route recurrent layers through the custom ops for the duration (re-entrant; threads see it too, which
    is harmless: the real implementations are the ATen ops)."""
    with _lock:
        _depth[0] += 1
        _rnn_module._VF = _VFShim()
    try:
        yield
    finally:
        with _lock:
            _depth[0] -= 1
            if _depth[0] == 0:
                _rnn_module._VF = _REAL_VF
