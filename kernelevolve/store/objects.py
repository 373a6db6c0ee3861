"""Artifact object store: kernels by content hash, per-node JSON/text artifacts.

A local folder (the default, ``.kernelevolve/artifacts``) or ``s3://bucket/prefix`` through s3fs.
DuckDB holds the metadata and refers to objects by *ref*, a relative POSIX path under the store
root, so a ref stays valid whichever backend holds the bytes.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from evaluators.identity import source_hash
from kernelevolve.errors import StoreFailure
from kernelevolve.store import layout
from kernelevolve.store.retry import retrying

_PRIVATE = ".ke-"  # temp/probe objects; never listed


def _process_umask() -> int:
    """The umask, read without changing it where Linux reports it (os.umask sets it, racing other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask




class StoreError(StoreFailure):
    """One-line, user-facing message (no traceback text) about an unusable store or missing artifact."""


class ArtifactMissing(StoreError):
    """An artifact the metadata names is not in the store (deleted, or lost with a folder)."""


def _reason(exc: BaseException) -> str:
    """First line of an exception, so backend errors (botocore's are verbose) fit in one line."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


def _check_ref(ref: str, allow_empty: bool = False) -> str:
    """Refs are relative POSIX paths; anything that could escape the store root is a bug upstream."""
    if not isinstance(ref, str) or (not ref and not allow_empty):
        raise ValueError(f"invalid artifact ref {ref!r}")
    if ref.startswith("/") or "\\" in ref or ".." in ref.split("/"):
        raise ValueError(f"artifact ref must be a relative path without '..': {ref!r}")
    return ref


class ObjectStore:
    """Artifacts under one root URL; cheap to construct (no I/O until the first operation)."""

    def __init__(self, url: str) -> None:
        self._s3 = url.startswith("s3://")
        if self._s3:
            self._root = url[len("s3://") :].strip("/")
            if not self._root:
                raise ValueError(f"artifact store URL needs a bucket: {url!r}")
            self._url = f"s3://{self._root}"
            # Read the endpoint now so the store is bound to the environment it was created in.
            self._endpoint = os.environ.get("KE_S3_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL")
        else:
            path = url[len("file://") :] if url.startswith("file://") else url
            self._root = os.path.abspath(os.path.expanduser(path))
            self._url = self._root
        self._fs_obj: Any = None

    @property
    def url(self) -> str:
        """Normalised root: an absolute local path, or ``s3://bucket/prefix`` without trailing slash."""
        return self._url

    @property
    def _fs(self) -> Any:
        """s3fs filesystem, built lazily. Several processes write one bucket, so never reuse a cached
        instance (skip_instance_cache) nor directory listings (use_listings_cache=False)."""
        if self._fs_obj is None:
            import s3fs

            client_kwargs = {"endpoint_url": self._endpoint} if self._endpoint else {}
            self._fs_obj = s3fs.S3FileSystem(
                client_kwargs=client_kwargs, use_listings_cache=False, skip_instance_cache=True
            )
        return self._fs_obj

    def _path(self, ref: str) -> str:
        return f"{self._root}/{ref}" if self._s3 else os.path.join(self._root, *ref.split("/"))

    def check_reachable(self, timeout_s: float = 3.0) -> None:
        """Fail within seconds, with one line, when an S3 store's endpoint does not answer or its bucket is
        missing: one HEAD of the bucket through a client of its own with short timeouts and no retries (the
        store's own client keeps botocore's patient defaults for real transfers). Writes nothing."""
        if not self._s3:
            return
        import s3fs

        fs = s3fs.S3FileSystem(
            client_kwargs={"endpoint_url": self._endpoint} if self._endpoint else {},
            config_kwargs={"connect_timeout": timeout_s, "read_timeout": timeout_s,
                           "retries": {"max_attempts": 1, "mode": "standard"}},
            use_listings_cache=False, skip_instance_cache=True,
        )
        fs.retries = 1  # s3fs's own retry loop around botocore's
        bucket = self._root.split("/", 1)[0]
        where = f"artifact store {self.url}" + (f" at {self._endpoint}" if self._endpoint else "")
        from botocore.exceptions import ConnectionError as NoConnection
        from botocore.exceptions import HTTPClientError

        try:
            fs.call_s3("head_bucket", Bucket=bucket)
        except FileNotFoundError:
            raise StoreError(f"{where}: bucket '{bucket}' does not exist") from None
        except PermissionError:
            return  # it answered; a policy may allow objects under the prefix but not HEAD of the bucket
        except (NoConnection, HTTPClientError, OSError) as exc:  # refused, no route, timed out
            raise StoreError(f"{where} cannot be reached: {_reason(exc)}") from None
        except Exception as exc:  # no credentials, a malformed endpoint: the store cannot be used either
            raise StoreError(f"{where} cannot be used: {_reason(exc)}") from None

    # -- writing -------------------------------------------------------------------------------------

    def check_writable(self) -> None:
        """Fail fast (before a search spends GPU time) if artifacts could not be saved."""
        probe = f"{_PRIVATE}probe-{uuid.uuid4().hex}"
        try:
            if self._s3:
                self._fs.pipe_file(self._path(probe), b"probe")
                self._fs.rm_file(self._path(probe))
            else:
                os.makedirs(self._root, exist_ok=True)
                Path(self._path(probe)).write_bytes(b"probe")
                os.remove(self._path(probe))
        except Exception as exc:  # any backend failure means "not usable"; callers want one line
            raise StoreError(f"artifact store {self.url} is not writable: {_reason(exc)}") from None

    def put_kernel(self, source: str) -> str:
        """Store a kernel under its sha256, so identical candidates share one object."""
        ref = layout.kernel_key(source_hash(source))
        if not self.exists(ref):
            self.put_text(ref, source)
        return ref

    def put_text(self, ref: str, text: str) -> None:
        """Atomic write: readers (``ke show``, other workers) never see a half-written artifact."""
        _check_ref(ref)
        data = text.encode("utf-8")
        try:
            if self._s3:  # a single PUT is atomic in S3
                retrying(lambda: self._fs.pipe_file(self._path(ref), data), f"write {ref}")
                return
            target = self._path(ref)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f"{_PRIVATE}tmp-", dir=os.path.dirname(target))
            try:
                with os.fdopen(fd, "wb") as fh:
                    os.fchmod(fh.fileno(), 0o666 & ~_process_umask())  # mkstemp's 600 shuts a team out
                    fh.write(data)
                os.replace(tmp, target)
            except BaseException:
                if os.path.exists(tmp):
                    os.remove(tmp)
                raise
        except Exception as exc:
            raise StoreError(f"cannot write artifact {ref} to {self.url}: {_reason(exc)}") from None

    def put_json(self, ref: str, obj: Any) -> None:
        """Stable, diffable JSON; ``default=str`` so paths/datetimes/enums never abort a save."""
        self.put_text(ref, json.dumps(obj, indent=2, sort_keys=True, default=str))

    # -- reading -------------------------------------------------------------------------------------

    def get_text(self, ref: str) -> str:
        _check_ref(ref)
        try:
            if self._s3:
                return retrying(lambda: self._fs.cat_file(self._path(ref)), f"read {ref}").decode("utf-8")
            return Path(self._path(ref)).read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ArtifactMissing(f"artifact {ref} missing from {self.url}") from None
        except Exception as exc:
            raise StoreError(f"cannot read artifact {ref} from {self.url}: {_reason(exc)}") from None

    def get_json(self, ref: str) -> Any:
        text = self.get_text(ref)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise StoreError(f"artifact {ref} in {self.url} is not valid JSON: {_reason(exc)}") from None

    def exists(self, ref: str) -> bool:
        """True only for a stored object. Backend errors raise rather than read as "absent" (which
        s3fs's isfile would do), so an outage is never mistaken for a missing artifact."""
        _check_ref(ref)
        try:
            if self._s3:
                return retrying(lambda: self._fs.info(self._path(ref)), f"look up {ref}").get("type") == "file"
            return os.path.isfile(self._path(ref))
        except FileNotFoundError:
            return False
        except Exception as exc:
            raise StoreError(f"cannot access artifact {ref} in {self.url}: {_reason(exc)}") from None

    def list(self, prefix: str = "") -> list[str]:
        """Refs of all objects whose ref starts with ``prefix`` (string-prefix semantics, as in S3)."""
        _check_ref(prefix, allow_empty=True)
        base = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        refs: list[str] = []
        try:
            if self._s3:
                root = f"{self._root}/{base}".rstrip("/")
                self._fs.invalidate_cache(root)
                found = retrying(lambda: self._fs.find(root), f"list {prefix or '/'}")
                refs = [p[len(self._root) + 1 :] for p in found]
            else:
                top = self._path(base) if base else self._root
                for dirpath, _dirs, files in os.walk(top):
                    rel = os.path.relpath(dirpath, self._root).replace(os.sep, "/")
                    refs += [f if rel == "." else f"{rel}/{f}" for f in files]
        except FileNotFoundError:
            return []
        except Exception as exc:
            raise StoreError(f"cannot list {prefix or '/'} in {self.url}: {_reason(exc)}") from None
        return sorted(
            r for r in refs if r.startswith(prefix) and not r.rsplit("/", 1)[-1].startswith(_PRIVATE)
        )

    @staticmethod
    def node_prefix(run_id: str, node_id: int) -> str:
        """Where a node's artifacts live (:mod:`kernelevolve.store.layout`)."""
        return layout.node_prefix(run_id, node_id)
