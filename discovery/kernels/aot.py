"""The query loops compiled ahead of time: an extension module that needs neither numba nor LLVM to run.

The compiled form of the loops (:mod:`.loops`) is numba's JIT, and numba's runtime (LLVM, ~270
modules, a target refresh) costs a process ~100 MB and a second before its first query,
where the loops' own machine code is under 1 MB. ``numba.pycc`` compiles the same
``*_loop`` functions, at every argument type listed in :data:`SIGNATURES`, into a Python
extension module once (:mod:`.build`: ``tooldisc kernels build``; ``make install``
runs it); a process then loads that module (under 1 MB) and never imports numba. There is
no second copy of any loop: the module is built from the functions in :mod:`.loops`.
This module finds, checks and loads it, and imports neither numba nor the loops.

The module is never stale: its name carries a SHA-256 key over what it is compiled from
(the source of :mod:`.loops` alone, the signatures, the CPU, the numba, numpy and Python
versions), and a process loads only the module whose name is the key it computes itself.
Otherwise, and for a call whose argument types no exported signature covers, the loops run
through numba's JIT as before (:mod:`tooldisc.discovery.kernels`), with the same bits either way.

It lives in one directory: ``$TOOLDISC_KERNELS_DIR`` when set, else
``$XDG_CACHE_HOME/tooldisc/kernels`` (``~/.cache/tooldisc/kernels``): a per-user cache
works for a read-only installed package as for an editable one, and processes with the
same sources and versions (worktrees, venvs) share one build.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from tooldisc.errors import ToolDiscError

ENV_DIR = "TOOLDISC_KERNELS_DIR"
# /proc/cpuinfo fields that name a CPU's model and instruction set (x86, then ARM); the rest (clock,
# core ids, bogomips) varies from boot to boot or core to core
_CPU_FIELDS = frozenset({"vendor_id", "cpu family", "model", "model name", "flags",
                         "CPU implementer", "CPU architecture", "CPU variant", "CPU part", "Features"})

# The argument types each loop is called with (inventoried from every call site: BM25F and n-gram
# gathers, the indexed retrieval's candidates, shared counts and query n-grams, the learned features'
# cell reads). An array argument lists its dtypes (C-contiguous, one dimension); every combination is
# exported. "int" and "float" are scalars (int64, float64). Count arrays are uint8 or uint16 (a token
# repeating one n-gram 256 times or more); index arrays are int32 (int64 only from 2^31 tools or cells:
# those calls run through the JIT).
COUNTS = ("uint8", "uint16")
SIGNATURES: dict[str, tuple[tuple[str, ...], ...]] = {
    # col_ptr, col_rows, col_data, ids, weights, n_rows
    "gather_loop": (("int64",), ("int32",), ("float32",), ("int64",), ("float32", "float64"), ("int",)),
    # lexical, allowed, ids, wq, gram_ptr, gram_tokens, gram_counts, table, token_ptr, token_tools,
    # token_counts, divisors, side_effect, wanted, w_bm25, w_ngram, w_prior, n
    "candidates_loop": (("float32",), ("bool",), ("int64",), ("float64",), ("int64",), ("int32",), COUNTS,
                        ("float64",), ("int64",), ("int32",), COUNTS, ("float64",), ("int8",), ("int",),
                        ("float",), ("float",), ("float",), ("int",)),
    # tool_ptr, tool_tokens, tool_counts, gram_ptr, gram_tokens, gram_counts, n_tokens, indices, ids,
    # table, idf, norms, w
    "shared_loop": (("int64",), ("int32",), COUNTS, ("int64",), ("int32",), COUNTS, ("int",), ("int64",),
                    ("int64",), ("float64",), ("float64",), ("float64",), ("float32",)),
    # points, lengths, alphabet, codes, keys, bits, lo, hi, part
    "query_grams_loop": (("uint32",), ("int64",), ("uint32",), ("int64",), ("int64",), ("int",), ("int",),
                         ("int",), ("uint8",)),
    # keys, data, n_rows, ids, weights, indices
    "rows_loop": (("uint32", "int64"), ("float32", "float64"), ("int",), ("int64",), ("float64",), ("int64",)),
    # a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_cols (the index build's T·G)
    "product_loop": (("int64",), ("int32",), ("float32",), ("int64",), ("int32",), ("float32",), ("int",)),
}

_SHORT = {"int64": "i8", "int32": "i4", "int8": "i1", "uint8": "u1", "uint16": "u2", "uint32": "u4",
          "float32": "f4", "float64": "f8", "bool": "b1", "int": "n", "float": "x"}
# the Python and numpy types a scalar argument may have (one exported form takes both)
SCALARS: dict[str, tuple[type, ...]] = {"int": (int, np.int64), "float": (float, np.float64)}
CONTIGUOUS_ALIGNED = 0x1 | 0x100  # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED (numpy's flags.num)


def signatures(loop: str) -> Iterator[tuple[str, ...]]:
    """Every combination of argument types exported for ``loop``."""
    return itertools.product(*SIGNATURES[loop])


def signature_count() -> int:
    """How many loop signatures the module exports."""
    return sum(1 for loop in SIGNATURES for _ in signatures(loop))


def symbol(loop: str, types: tuple[str, ...]) -> str:
    """The exported name of ``loop`` at ``types`` (e.g. ``gather_loop__i8_i4_f4_i8_f8_n``)."""
    return f"{loop}__{'_'.join(_SHORT[t] for t in types)}"


def host_cpu() -> str:
    """This machine's CPU as the OS reports it (model and instruction-set flags), or "" where it does not.

    The module is compiled for the host CPU only when this names it: the key then carries it, so a
    module in a directory shared with another kind of CPU (whose instructions might be missing
    there) is never loaded by it. Elsewhere the module targets the architecture's generic CPU.
    Host code ran the queries 1-3% faster than generic code here (docs/kernels.md).
    """
    if not sys.platform.startswith("linux"):
        return ""
    fields = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:  # the first processor's block
                if not line.strip():
                    break
                name, _, value = line.partition(":")
                if name.strip() in _CPU_FIELDS:
                    fields.append(f"{name.strip()}={' '.join(value.split())}")
    except OSError:
        return ""
    return "\n".join(sorted(fields))


def target_cpu(cpu: str) -> str:
    """numba.pycc's ``target_cpu`` for a :func:`host_cpu` value: "host" when it names the CPU, else generic."""
    return "host" if cpu else ""


def key_parts() -> dict[str, bytes] | None:
    """What the module is compiled from, by name; None when numba is not installed or the source unreadable.

    The source of :mod:`.loops` (all of it: a loop may call anything in it; the dispatch beside it in
    :mod:`tooldisc.discovery.kernels` is not compiled, so an edit there keeps the module), the signatures,
    the CPU compiled for (:func:`host_cpu`) and the numba, numpy and Python versions. numba's version is read from its
    installed metadata: computing the key never imports numba.
    """
    from importlib import metadata

    try:
        numba_version = metadata.version("numba")
        source = Path(__file__).with_name("loops.py").read_bytes()
    except (metadata.PackageNotFoundError, OSError):
        return None
    return {"source": source, "signatures": repr(sorted(SIGNATURES.items())).encode(),
            "cpu": host_cpu().encode(), "numba": numba_version.encode(), "numpy": np.__version__.encode(),
            "python": f"{sys.implementation.cache_tag} {sys.platform}".encode()}


def digest(parts: dict[str, bytes]) -> str:
    """The SHA-256 (hex) of ``parts``: each name and value length-prefixed, so no two inputs collide by shifting."""
    h = hashlib.sha256()
    for name, value in sorted(parts.items()):
        for piece in (name.encode(), value):
            h.update(len(piece).to_bytes(8, "little"))
            h.update(piece)
    return h.hexdigest()


def key() -> str | None:
    """The key of the module this process may load (:func:`key_parts`), or None (no module can match)."""
    parts = key_parts()
    return None if parts is None else digest(parts)


def module_name(hexkey: str) -> str:
    """The extension module's name for a key: its file name and init symbol both carry the key."""
    return f"_tooldisc_kernels_{hexkey[:24]}"


def directory() -> Path:
    """Where the module is built and looked for (module docstring); a usage error without a home directory
    (then a process runs the JIT: :func:`load`)."""
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return Path(chosen)
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        try:
            cache = str(Path.home() / ".cache")
        except (RuntimeError, KeyError) as exc:
            from tooldisc.errors import UsageError

            raise UsageError(f"no home directory for the compiled query loops ({exc}): set {ENV_DIR}") from exc
    return Path(cache) / "tooldisc" / "kernels"


def module_path(hexkey: str, where: Path | None = None) -> Path:
    """The file the module of key ``hexkey`` lives in."""
    import sysconfig

    return (where or directory()) / (module_name(hexkey) + str(sysconfig.get_config_var("EXT_SUFFIX") or ".so"))


@dataclass(frozen=True)
class Status:
    """Which compiled form a process would run, and why (``tooldisc kernels``)."""

    form: str  # "aot", "jit" (numba installed, no matching module) or "numpy" (no numba)
    reason: str
    key: str | None
    path: str | None

    def to_dict(self) -> dict[str, Any]:
        try:
            where: str | None = str(directory())
        except ToolDiscError:
            where = None
        return {"form": self.form, "reason": self.reason, "key": self.key, "path": self.path,
                "directory": where, "cpu": "host" if host_cpu() else "generic"}


def status() -> Status:
    """Which form a process would run and why: it loads the module as :func:`load` does (a damaged
    file is reported, not trusted for being there)."""
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        return Status("numpy", "numba (the fast extra) is not installed", None, None)
    hexkey = key()
    if hexkey is None:
        return Status("jit", f"the source of the loops ({Path(__file__).with_name('loops.py')}) is not readable",
                      None, None)
    try:
        path = module_path(hexkey)
    except ToolDiscError as exc:
        return Status("jit", exc.message, hexkey, None)
    if not path.is_file():
        return Status("jit", "no compiled module matches the loops' sources and versions; "
                             "'tooldisc kernels build' compiles it", hexkey, str(path))
    _, error = _load(hexkey, path)
    if error:
        return Status("jit", f"the compiled module does not load ({error}); 'tooldisc kernels build --force' "
                             "compiles it again", hexkey, str(path))
    return Status("aot", "the compiled module matches the loops' sources and versions", hexkey, str(path))


def load(where: Path | None = None) -> ModuleType | None:
    """The compiled module whose key matches this process's, or None (then the JIT runs)."""
    hexkey = key()
    if hexkey is None:
        return None
    try:
        path = module_path(hexkey, where)
    except ToolDiscError:  # no home directory: the JIT runs (``tooldisc kernels`` says why)
        return None
    if not path.is_file():
        return None
    return _load(hexkey, path)[0]


def _load(hexkey: str, path: Path) -> tuple[ModuleType | None, str | None]:
    """The extension module at ``path`` (its init symbol carries ``hexkey``), or None and why it did not load."""
    import importlib.machinery
    import importlib.util

    name = module_name(hexkey)
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    if spec is None:
        return None, "no import spec"
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except (ImportError, OSError, RuntimeError, SystemError) as exc:  # damaged, foreign or of another ABI
        return None, f"{type(exc).__name__}: {exc}"
    return module, None


def dispatch_table(module: ModuleType, loop: str) -> dict[tuple[Any, ...], Callable[..., Any]]:
    """The exported forms of ``loop`` by the argument key :func:`argument_key` gives for a call."""
    table: dict[tuple[Any, ...], Callable[..., Any]] = {}
    for types in signatures(loop):
        target = getattr(module, symbol(loop, types), None)
        if target is None:
            continue
        for key_ in itertools.product(*(SCALARS[t] if t in SCALARS else (np.dtype(t),) for t in types)):
            table[key_] = target
    return table


def argument_key(args: tuple[Any, ...], _array: type = np.ndarray, _flags: int = CONTIGUOUS_ALIGNED) -> tuple[Any, ...]:
    """A call's key in :func:`dispatch_table`: each one-dimensional C-contiguous aligned array's dtype,
    each other argument's type (an array of any other shape or layout is keyed ``np.ndarray``, which no
    table holds, so the JIT takes that call). An unbound call runs it over every argument (~1.6 µs for
    18); an index binds its loops once (:meth:`tooldisc.discovery.kernels.Kernels.bind`) and keys only its own arrays with it."""
    return tuple([a.dtype if type(a) is _array and a.ndim == 1 and a.flags.num & _flags == _flags else type(a)
                  for a in args])
