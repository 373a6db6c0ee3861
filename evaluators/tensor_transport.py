"""Moving a candidate's outputs to the judge without trusting the candidate's process.

The judge lives in the long-lived worker and must never unpickle what an untrusted process sends (a crafted
pickle runs code in the judge). So outputs cross as plain JSON descriptors:
- on a GPU, a CUDA IPC handle per tensor: the worker maps the candidate's own device memory and compares in
  place, with no copy through the host (the old path wrote ~1.4 GB per softmax evaluation to disk and compared
  in float64 on the CPU, 85 s of a 100 s evaluation under load);
- on the CPU interpreter, one ``torch.save`` file read back with ``weights_only=True`` (outputs are small).
A descriptor is validated field by field before it is opened; a lie about sizes can at worst fault the
worker's CUDA context, which the worker answers by exiting (it is restarted, the node records a crash).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

_DTYPES = {str(d): d for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8,
                               torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
                               torch.complex64, torch.complex128)}


class TransportError(Exception):
    """A descriptor that does not describe a tensor the worker may open."""


def send_outputs(outputs: dict[str, list[torch.Tensor]], workdir: str) -> dict[str, Any]:
    """Child side: describe ``outputs`` (which the child keeps alive until the judge has answered)."""
    first = next((t for ts in outputs.values() for t in ts), None)
    if first is None or first.device.type != "cuda":
        path = Path(workdir) / "candidate_outputs.pt"
        torch.save({k: [t.detach().cpu() for t in v] for k, v in outputs.items()}, path)
        return {"transport": "file", "path": str(path)}
    torch.cuda.synchronize()
    return {"transport": "ipc", "tensors": {k: [_describe(t) for t in v] for k, v in outputs.items()}}


def receive_outputs(message: dict[str, Any], workdir: str) -> dict[str, list[torch.Tensor]]:
    """Worker side: the tensors a child described, opened without unpickling anything it wrote."""
    if message.get("transport") == "file":
        path = Path(workdir) / "candidate_outputs.pt"  # never a path the child chose
        data = torch.load(path, weights_only=True)
        if not isinstance(data, dict):
            raise TransportError("candidate outputs are not a dict of tensor lists")
        return data
    if message.get("transport") != "ipc" or not isinstance(message.get("tensors"), dict):
        raise TransportError("unknown output transport")
    return {str(k): [_open(d) for d in v] for k, v in message["tensors"].items()}


def _describe(tensor: torch.Tensor) -> dict[str, Any]:
    tensor = tensor.detach()
    if tensor.device.type != "cuda":
        raise TransportError("outputs mix devices")
    base = {"shape": list(tensor.shape), "stride": list(tensor.stride()), "offset": tensor.storage_offset(),
            "dtype": str(tensor.dtype)}
    if tensor.untyped_storage().nbytes() == 0:
        return {**base, "empty": True}
    (device, handle, size, offset_bytes, ref_handle, ref_offset, event_handle,
     event_sync) = tensor._typed_storage()._share_cuda_()
    return {**base, "device": int(device), "handle": handle.hex(), "size": int(size), "offset_bytes": int(offset_bytes),
            "ref_handle": ref_handle.hex(), "ref_offset": int(ref_offset),
            "event_handle": event_handle.hex() if event_handle else None, "event_sync": bool(event_sync)}


def _int(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TransportError(f"descriptor field {name} is not a non-negative integer")
    return value


def _open(desc: Any) -> torch.Tensor:
    if not isinstance(desc, dict) or desc.get("dtype") not in _DTYPES:
        raise TransportError("malformed tensor descriptor")
    dtype = _DTYPES[desc["dtype"]]
    shape = [_int(s, "shape") for s in desc.get("shape", [])]
    stride = [_int(s, "stride") for s in desc.get("stride", [])]
    offset = _int(desc.get("offset"), "offset")
    if len(shape) != len(stride):
        raise TransportError("shape and stride differ in length")
    if desc.get("empty"):
        return torch.empty_strided(shape, stride, dtype=dtype, device="cuda")
    size = _int(desc.get("size"), "size")
    extent = offset + sum((s - 1) * st for s, st in zip(shape, stride, strict=True)) + 1 if all(shape) else 0
    if extent * dtype.itemsize > size:
        raise TransportError("a tensor descriptor reaches past its storage")
    from torch.multiprocessing.reductions import rebuild_cuda_tensor

    event = desc.get("event_handle")
    return rebuild_cuda_tensor(
        torch.Tensor, torch.Size(shape), tuple(stride), offset, torch.storage.TypedStorage, dtype,
        _int(desc.get("device"), "device"), bytes.fromhex(str(desc.get("handle"))), size,
        _int(desc.get("offset_bytes"), "offset_bytes"), False, bytes.fromhex(str(desc.get("ref_handle"))),
        _int(desc.get("ref_offset"), "ref_offset"), bytes.fromhex(event) if event else None,
        bool(desc.get("event_sync")))
