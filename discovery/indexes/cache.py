"""The on-disk cache of built text indexes: warm one-shots of the CLI on a large catalog.

A one-shot ``tooldisc discover --catalog big.json`` spends a good part of its time building
the BM25F, character n-gram and alias indexes from the catalog's text. They depend only on
the tools' text in catalog order, the ranker config and the code that builds them, so they
are kept on disk and read back when all of those are the same.

What is cached, and what never is:

* **Only ranking arrays**: the BM25F term columns, the n-gram index, the alias index and
  their vocabularies. The security index, the authorized sets, the tool records and
  every quarantine are built from the live catalog in every process: nothing about who
  may see a tool is ever read from the cache, so a cached and a fresh engine authorize
  alike by construction, and a cached index can only rank what the live filter passed.
* **The key covers everything the arrays depend on**: the catalog's tools in order (name
  and definition hash of each, which covers every field's content) and its version, the
  whole ranker config, a digest of the learned file in use, the tooldisc version and a
  digest of the discovery package's own sources and data (tokeniser, stop words, stemming,
  index layout), the Python, Unicode, numpy and PyStemmer versions, and the cache format.
  A config that uses the semantic tier (a model) is not cached.
* **Never pickle**: one ``.npz`` per key (``numpy.load(..., allow_pickle=False)``) holding
  the arrays and a JSON manifest (scalars, vocabularies, the key's parts and a SHA-256 of
  every array). An entry is used only when its manifest names this very key and every
  array's digest matches; a stale, foreign, truncated or damaged entry is rebuilt and
  replaced, never trusted.
* **Files**: written atomically (a temporary file renamed into place) with the mode the
  umask gives a new file (:func:`tooldisc.files.write_atomic`). Where:
  ``$TOOLDISC_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/tooldisc/index``
  (``~/.cache/tooldisc/index``). Size bound: after each write the oldest entries (by last
  use) are removed until the directory holds at most :data:`MAX_BYTES` (1 GiB; about 75 MB
  an entry at 100,000 tools, 6 MB at 10,000) and at most :data:`MAX_ENTRIES` entries.

The command line uses the cache by default (``--no-cache`` to build fresh); the Python API
only when given one (``Discoverer(..., cache=IndexCache.default())``). ``tooldisc cache
status`` / ``tooldisc cache clear`` show and empty it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import sys
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from tooldisc.errors import UsageError

ENV_DIR = "TOOLDISC_CACHE_DIR"
FORMAT = "tooldisc-index-cache-1"
MAX_BYTES = 1 << 30
MAX_ENTRIES = 64
_SUFFIX = ".npz"
_META = "__manifest__"
_SKIP = ("kernels",)  # chosen by the process that loads the index, never stored


@dataclass(frozen=True)
class CacheStatus:
    """What ``tooldisc cache status`` shows."""

    directory: str
    entries: int
    bytes: int
    max_bytes: int
    max_entries: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class NoCacheDirectory(UsageError):
    """Nothing names where the cache lives: no ``$TOOLDISC_CACHE_DIR``, ``$XDG_CACHE_HOME`` or home directory.
    ``tooldisc cache`` stops on it (exit 2); a command that only reads the cache runs without it."""


@dataclass(frozen=True)
class IndexCache:
    """A directory of cached text indexes (see the module docstring)."""

    directory: Path

    @classmethod
    def default(cls) -> IndexCache:
        """``$TOOLDISC_CACHE_DIR``, else the per-user cache directory."""
        chosen = os.environ.get(ENV_DIR)
        if chosen:
            return cls(Path(chosen))
        base = os.environ.get("XDG_CACHE_HOME")
        if not base:
            try:
                base = str(Path.home() / ".cache")
            except (RuntimeError, KeyError) as exc:  # no $HOME and a user id without a passwd entry (containers)
                raise NoCacheDirectory(f"no home directory for the on-disk cache ({exc}): set {ENV_DIR}") from None
        return cls(Path(base) / "tooldisc" / "index")

    def entries(self) -> list[Path]:
        try:
            return sorted(p for p in self.directory.iterdir() if p.suffix == _SUFFIX and p.is_file())
        except OSError:
            return []

    def status(self) -> CacheStatus:
        files = self.entries()
        size = sum(_size(p) for p in files)
        return CacheStatus(str(self.directory), len(files), size, MAX_BYTES, MAX_ENTRIES)

    def clear(self) -> int:
        """Remove every entry (and stray temporary files of interrupted writes); the number of entries removed."""
        removed = 0
        for p in self.entries():
            p.unlink(missing_ok=True)
            removed += 1
        with contextlib.suppress(OSError):
            for p in self.directory.glob(".*.tmp"):
                p.unlink(missing_ok=True)
        return removed

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{_SUFFIX}"

    def load(self, key: str, parts: Mapping[str, str]) -> dict[str, Any] | None:
        """The stored indexes for ``key``, or None (absent, foreign, stale or damaged: never trusted)."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
            manifest = json.loads(arrays.pop(_META).tobytes().decode("utf-8"))
        except Exception:  # any unreadable entry is simply rebuilt
            return None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("key") != key \
                or manifest.get("parts") != dict(parts):
            return None
        digests = manifest.get("digests")
        if not isinstance(digests, dict) or set(digests) != set(arrays):
            return None
        for name, array in arrays.items():
            if _digest(array) != digests[name]:
                return None
        with contextlib.suppress(OSError):
            os.utime(path)  # last use, for the eviction order
        return {"manifest": manifest, "arrays": arrays}

    def store(self, key: str, parts: Mapping[str, str], indexes: Mapping[str, Any]) -> None:
        """Write ``indexes`` (name → index dataclass or None) under ``key``; a failure to write is not an error
        (the process has its freshly built index either way)."""
        arrays: dict[str, np.ndarray] = {}
        described: dict[str, Any] = {}
        for name, index in indexes.items():
            described[name] = None if index is None else _describe(name, index, arrays)
        self.store_arrays(key, parts, arrays, {"indexes": described})

    def store_arrays(self, key: str, parts: Mapping[str, str], arrays: dict[str, np.ndarray],
                     fields: Mapping[str, Any]) -> None:
        """Write ``arrays`` and the manifest ``fields`` (JSON) under ``key``, each array with its SHA-256
        (what :meth:`load` checks); a failure to write is not an error."""
        from tooldisc.files import reserve

        manifest = {**fields, "format": FORMAT, "key": key, "parts": dict(parts),
                    "digests": {name: _digest(a) for name, a in arrays.items()}}
        arrays = {**arrays, _META: np.frombuffer(json.dumps(manifest, ensure_ascii=False, sort_keys=True)
                                                 .encode("utf-8"), dtype=np.uint8)}
        try:
            out = reserve(self.path(key))  # a temporary file beside the entry (the umask's mode), renamed over it
        except ValueError:  # a directory that cannot be created or written: the process has its result anyway
            return
        try:
            np.savez(str(out.tmp), **arrays)  # straight to the file: no second copy of a 100 MB entry in memory
            out.commit()
        except OSError:
            out.discard()
            return
        except BaseException:
            out.discard()
            raise
        self.evict(keep=key)

    def evict(self, keep: str | None = None) -> None:
        """Remove the least recently used entries over :data:`MAX_BYTES` or :data:`MAX_ENTRIES`."""
        files = [(p, _mtime(p), _size(p)) for p in self.entries() if p.stem != keep]
        total = sum(s for _, _, s in files) + (_size(self.path(keep)) if keep else 0)
        count = len(files) + (1 if keep else 0)
        for p, _, s in sorted(files, key=lambda f: (f[1], f[0].name)):
            if total <= MAX_BYTES and count <= MAX_ENTRIES:
                break
            p.unlink(missing_ok=True)
            total -= s
            count -= 1


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _digest(array: np.ndarray) -> str:
    h = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    h.update(np.ascontiguousarray(array).data)
    return h.hexdigest()


def _describe(prefix: str, index: Any, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """One index dataclass as JSON fields, its arrays put in ``arrays`` under ``prefix.field``."""
    out: dict[str, Any] = {"type": type(index).__name__}
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(index):
        if f.name in _SKIP:
            continue
        value = getattr(index, f.name)
        if isinstance(value, np.ndarray):
            arrays[f"{prefix}.{f.name}"] = value
            fields[f.name] = {"array": f"{prefix}.{f.name}"}
        elif isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
            names = [f"{prefix}.{f.name}.{i}" for i in range(len(value))]
            arrays.update(zip(names, value, strict=True))
            fields[f.name] = {"arrays": names}
        elif isinstance(value, Mapping):  # a vocabulary: str → int
            fields[f.name] = {"mapping": [[k, int(v)] for k, v in value.items()]}
        elif value is None or isinstance(value, bool | int | float | str):
            fields[f.name] = {"value": value}
        else:
            raise TypeError(f"cannot cache {type(index).__name__}.{f.name} ({type(value).__name__})")
    out["fields"] = fields
    return out


def restore(entry: Mapping[str, Any], name: str, cls: type) -> Any:
    """The index ``name`` of a loaded entry as an instance of ``cls`` (None when it was None)."""
    described = entry["manifest"]["indexes"].get(name)
    if described is None:
        return None
    if described.get("type") != cls.__name__:
        raise ValueError(f"cached {name} is a {described.get('type')}, not a {cls.__name__}")
    arrays = entry["arrays"]
    kwargs: dict[str, Any] = {}
    for field, spec in described["fields"].items():
        if "array" in spec:
            kwargs[field] = arrays[spec["array"]]
        elif "arrays" in spec:
            kwargs[field] = tuple(arrays[a] for a in spec["arrays"])
        elif "mapping" in spec:
            kwargs[field] = {k: v for k, v in spec["mapping"]}
        else:
            kwargs[field] = spec["value"]
    return cls(**kwargs)


@cache
def _sources_digest() -> str:
    """SHA-256 over the discovery package's sources and data files: any edit of the code that builds an
    index (or of its stop words and rules) is another key."""

    root = Path(__file__).resolve().parent.parent  # the discovery package, its wings included
    h = hashlib.sha256()
    for p in sorted([*root.rglob("*.py"), *(root / "data").glob("*")]):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(environment_text(("tooldisc", "numpy", "pystemmer")).encode())
    return h.hexdigest()


def environment_text(dists: tuple[str, ...]) -> str:
    """What else a cached result depends on, as key text: each distribution's version (``none`` when absent),
    Python's and Unicode's. The index and catalog-records caches both key on it."""
    from importlib import metadata

    versions = []
    for dist in dists:
        try:
            versions.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist}=none")
    return ";".join([*versions, sys.version, f"unicode={unicodedata.unidata_version}"])


def key_parts(catalog: Any, config: Any, learned_digest: str = "") -> dict[str, str]:
    """What an index depends on, each part a digest (see the module docstring)."""
    tools = hashlib.sha256()
    for t in catalog.tools:  # in catalog order: the arrays' rows are catalog positions
        tools.update(f"{t.name}\0{t.definition_hash}\n".encode("utf-8", "surrogatepass"))
    tools.update(f"version={catalog.version!r}".encode("utf-8", "surrogatepass"))
    config_text = json.dumps(config.to_mapping(), sort_keys=True, ensure_ascii=False, default=str)
    return {
        "format": FORMAT,
        "tools": tools.hexdigest(),
        "config": hashlib.sha256(config_text.encode("utf-8")).hexdigest(),
        "learned": learned_digest,
        "code": _sources_digest(),
    }


def cache_key(parts: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(parts), sort_keys=True).encode()).hexdigest()[:40]


def cached(cache_dir: IndexCache, parts: Mapping[str, str], build: Callable[[], dict[str, Any]],
           classes: Mapping[str, type]) -> tuple[dict[str, Any], bool]:
    """The indexes named in ``classes``, read from the cache or built by ``build()`` and stored;
    and whether they came from the cache."""
    key = cache_key(parts)
    entry = cache_dir.load(key, parts)
    if entry is not None:
        try:
            return {name: restore(entry, name, cls) for name, cls in classes.items()}, True
        except Exception:  # a manifest that does not fit these classes: rebuilt like any bad entry
            pass
    built = build()
    cache_dir.store(key, parts, built)
    return built, False
