"""The lowering's one error type: its message is one line that names what could not be lowered."""


class LoweringError(Exception):
    """The reference cannot be lowered to Triton (the message names the op, e.g. 'aten.fft_r2c.default')."""
