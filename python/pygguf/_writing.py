"""Writing files: save, edit, split, merge, quantize_model; and a model's facts.

Every file is written as the gguf tools write it: beside its target (``.NAME.gguf-tmp-XXXXXX``), flushed
to the disk and renamed over the target, so that the path holds the old file or the complete new one
whatever happens; an error (or Ctrl-C, or an exception of a progress callback) leaves no file behind.
The GIL is released while the bytes move.

Metadata values
---------------
``set=`` (:func:`edit`) and ``metadata=`` (:func:`save`) map keys to values. A value's GGUF type is
inferred as gguf-py's ``GGUFValueType.get_type`` infers it, numbers widened where gguf-py would fail:

============================  ===================================================================
Python value                  GGUF value
============================  ===================================================================
``bool``                      ``BOOL``
``int``                       ``INT32`` (gguf-py's choice); ``INT64`` when it does not fit, then
                              ``UINT64`` (gguf-py raises there)
``float``                     ``FLOAT32`` (gguf-py's choice); a finite number float32 cannot hold
                              (it would become infinite, or 0) is refused, as by gguf-edit
``str``                       ``STRING``: its UTF-8 bytes (``surrogateescape``: a string read by
                              :func:`pygguf.open`, partial UTF-8 included, is written back as it was)
``bytes``, ``bytearray``      ``STRING``, the bytes as they are
numpy scalar                  its own type (``numpy.uint32(7)`` is ``UINT32``, ``numpy.float64`` is
                              ``FLOAT64``, ``numpy.bool_`` is ``BOOL``)
1-D numpy array               ``ARRAY`` of its dtype's type (bool, int8 ... uint64, float32, float64;
                              float16 has no GGUF value type); arrays of ``str`` as strings
``list``                      ``ARRAY``: items of one kind, typed as above; ints together (``INT32``
                              when every item fits, else ``INT64``, else ``UINT64``); lists (or
                              arrays) of arrays give an array of arrays. An empty list has no item type
:class:`pygguf.StringArray`   ``ARRAY`` of ``STRING`` (the stored bytes)
``(ValueType.X, value)``      exactly type X: ``(ValueType.UINT32, 4096)``; with a list or an array,
                              an ``ARRAY`` of X items: ``(ValueType.UINT8, [1, 2])``,
                              ``(ValueType.STRING, [])``; ``(ValueType.ARRAY, [...])`` infers the items
============================  ===================================================================

An integer out of the type's range, a float where an integer is needed, a tuple (use a list), ``None``
or a dict raise ``TypeError`` or ``ValueError`` naming the key. Keys must be non-empty printable ASCII
(the format's rule: :class:`GGUFError` otherwise).

Values read from a model lose their exact type when passed as plain Python values (a ``UINT32`` comes
back as an ``int``, written as ``INT32``): to copy a model with changes, use :func:`edit`, which keeps
every other key's type, or pass ``model.metadata`` itself to :func:`save`, or give types explicitly
(``(m.metadata.type(k), m.metadata[k])``). Numeric arrays and string arrays read from a model keep theirs.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Union

import numpy as np

from . import _core
from ._args import integer
from ._model import Metadata, Model, Tensor
from ._types import GGMLType

PathLike = Union[str, "os.PathLike[str]"]
ModelLike = Union[PathLike, Model]
TypeLike = Union[GGMLType, int, str]

#: numpy dtypes written as a tensor of the same ggml type, as gguf-py's ``GGUFWriter.add_tensor`` maps them.
_TENSOR_TYPES = {
    np.dtype(np.float32): GGMLType.F32,
    np.dtype(np.float16): GGMLType.F16,
    np.dtype(np.float64): GGMLType.F64,
    np.dtype(np.int8): GGMLType.I8,
    np.dtype(np.int16): GGMLType.I16,
    np.dtype(np.int32): GGMLType.I32,
    np.dtype(np.int64): GGMLType.I64,
}


def _entries(values: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> list[tuple[str, Any]]:
    if values is None:
        return []
    items = values.items() if isinstance(values, Mapping) else values
    out = []
    for item in items:
        key, value = item
        if not isinstance(key, str):
            raise TypeError(f"a metadata key must be a str, not {key!r}")
        out.append((key, value))
    return out


def _source_of(model: ModelLike) -> Any:
    """A Model's core source, or the path as a str."""
    if isinstance(model, Model):
        return model._open()
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    raise TypeError(f"expected a path or a pygguf.Model, not {type(model).__name__}")


def _order_of(dtype: np.dtype) -> str:
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and sys.byteorder == "big"):
        return "big"
    return "little"


def _tensor_entry(name: str, t: Any) -> tuple[str, int, Any, list[int], str]:
    if not isinstance(name, str):
        raise TypeError(f"a tensor name must be a str, not {name!r}")
    if isinstance(t, Tensor):
        return name, int(t.type), t.raw, list(t.shape), t._source.byte_order
    if isinstance(t, tuple):
        if len(t) != 3:
            raise TypeError(f"{name}: a quantized tensor is (GGMLType, raw bytes, shape ne0-first), not {len(t)} items")
        type_, data, shape = t
        if isinstance(type_, str):
            type_ = GGMLType.from_name(type_)
        return name, int(type_), data, [integer(d, f"{name}: shape[{k}]", 0) for k, d in enumerate(shape)], "little"
    a = np.asarray(t)
    if a.dtype.newbyteorder("=") not in _TENSOR_TYPES:
        raise TypeError(
            f"{name}: a numpy array of dtype {a.dtype} has no tensor type: float32, float16, float64, int8, int16, "
            "int32 and int64 arrays are written as such; convert others (a.astype(numpy.float32)), or give "
            "(GGMLType.X, raw bytes, shape) for data already in a ggml type (bf16 bits, quantized blocks)"
        )
    type_ = _TENSOR_TYPES[a.dtype.newbyteorder("=")]
    shape = list(reversed(a.shape)) or [1]
    return name, int(type_), np.ascontiguousarray(a), shape, _order_of(a.dtype)


def save(
    path: PathLike,
    metadata: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    tensors: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    *,
    alignment: int | None = None,
    byte_order: str = "little",
) -> None:
    """Writes a new GGUF file: the bytes ggml's ``gguf_write_to_file`` writes for the same keys and
    tensors in the same order (GGUF v3; each tensor's data padded to the alignment).

    Args:
        path: the file to write (replaced atomically when it exists; a symlink is followed).
        metadata: key to value, in file order (see the module's table for the types); or a model's
            :class:`Metadata` (``model.metadata``), copied with every type as stored.
        tensors: name to tensor, in file order. A numpy array is written as the tensor of its dtype
            (float32 as ``F32``, float16 ``F16``, float64 ``F64``, int8/16/32/64 ``I8``...``I64``, as
            gguf-py does; any other dtype is refused: convert it first), its shape reversed into
            ggml's order (numpy's last axis is ``ne0``, the row), copied to C order if it is not. Data
            already in a ggml type is ``(GGMLType, raw bytes, shape ne0-first)``: quantized blocks, bf16
            bits, in little-endian byte order. A :class:`Tensor` of an opened model is copied as stored.
        alignment: the data alignment: sets ``general.alignment`` (uint32) in place when the metadata
            has it, else appends it when it is not 32 (the default, written without the key).
        byte_order: ``"little"``, or ``"big"`` for a big-endian file (header and tensors converted).
    Raises:
        GGUFError: a key or tensor the format refuses (a duplicate, a name over 63 bytes, data of the
            wrong size for its type and shape, an alignment that is not a power of two...).
        TypeError, ValueError: a value or tensor that has no GGUF type.
        OSError: the file cannot be written (then nothing is left behind, and ``path`` is untouched).
    """
    copy_from = None
    entries: list[tuple[str, Any]]
    if isinstance(metadata, Metadata):
        copy_from, entries = metadata._source, []
    else:
        entries = _entries(metadata)
    items = [] if tensors is None else (tensors.items() if isinstance(tensors, Mapping) else tensors)
    tensor_entries = [_tensor_entry(name, t) for name, t in items]
    _core.save(os.fspath(path), copy_from, entries, tensor_entries, alignment, byte_order)


def edit(
    src: ModelLike,
    dst: PathLike | None = None,
    *,
    set: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,  # noqa: A002 (gguf-edit's name)
    delete: Iterable[str] = (),
    rename: Mapping[str, str] | None = None,
    byte_order: str | None = None,
    in_place: bool = False,
) -> None:
    """Edits a model's metadata, or its byte order: the bytes ``gguf-edit`` writes for the same edits
    (ggml's layout). The edits apply in the order ``gguf-edit --del K... --rename K=NEW... --set
    K=V...`` applies them: deletions, then renames (a key keeps its place and value), then sets (as
    ggml's ``gguf_set_val_*``: a key that exists is removed and the new value appended last).

    Args:
        src: the file (a path), or an opened one-file :class:`Model` (a model from a buffer needs ``dst``).
        dst: the file to write; ``None`` rewrites ``src`` itself (a new file renamed over it: its mode,
            owner and symlinks kept).
        set: key to value (see the module's table for the types).
        delete: keys to remove (a key that is not there is ignored).
        rename: old key to new key.
        byte_order: ``"little"`` or ``"big"``: the output's byte order (tensors converted); ``None``
            keeps the input's.
        in_place: rewrite only ``src``'s header, without moving a tensor byte, when the new metadata fits
            before the tensor data (the alignment padding): milliseconds for any size. ``src`` must be
            a path (close any model open on it: its views would see the new header); the old header is
            kept in ``src + ".gguf-backup"`` until the new one is flushed (``gguf-edit --restore``
            after a crash).
    Raises:
        GGUFError: an edit the format refuses; ``out_of_range`` when ``in_place`` and the metadata does
            not fit (write a new file instead) or ``byte_order`` changes; ``pending_restore`` when an
            interrupted in-place edit left a backup of ``src``.
        OSError: a file that cannot be read or written (nothing is left behind).
    """
    if in_place and dst is not None:
        raise ValueError("in_place edits src itself: no dst")
    delete_list = [delete] if isinstance(delete, str) else list(delete)
    for k in delete_list:
        if not isinstance(k, str):
            raise TypeError(f"a metadata key must be a str, not {k!r}")
    renames = list((rename or {}).items())
    for a, b in renames:
        if not isinstance(a, str) or not isinstance(b, str):
            raise TypeError("rename maps a key (str) to its new name (str)")
    _core.edit(
        _source_of(src),
        None if dst is None else os.fspath(dst),
        _entries(set),
        delete_list,
        renames,
        byte_order,
        in_place,
    )


_U64_MAX = (1 << 64) - 1


def _size_of(max_size: int | str) -> int:
    if isinstance(max_size, str):
        s = max_size.strip()
        if len(s) < 2 or s[-1] not in "MG" or not s[:-1].isdigit() or int(s[:-1]) == 0:
            raise ValueError(f"max_size is a byte count or a size like '500M' or '4G', not {max_size!r}")
        n = int(s[:-1]) * (1_000_000_000 if s[-1] == "G" else 1_000_000)
        if n > _U64_MAX:
            raise ValueError(f"max_size must be at most {_U64_MAX} bytes, not {max_size!r}")
        return n
    return integer(max_size, "max_size", 1, _U64_MAX)


def split(
    src: ModelLike,
    out_prefix: PathLike,
    *,
    max_tensors: int | None = None,
    max_size: int | str | None = None,
    no_tensor_first_split: bool = False,
) -> list[str]:
    """Splits a model into shards as llama.cpp's ``gguf-split`` does: the same files, byte for byte
    (``OUT_PREFIX-00001-of-0000n.gguf``...). The first shard holds the metadata; every shard the keys
    ``split.no``, ``split.count`` and ``split.tensors.count``.

    Shards that already have the prefix (of any count) are replaced all-or-nothing through a journal
    (``OUT_PREFIX.gguf-split-journal``; ``gguf-split --restore`` after a crash); an error or Ctrl-C leaves
    the old set as it was and no new file.

    Args:
        src: the model: a file, any shard of a split model (re-split), or an opened :class:`Model`.
        out_prefix: the shards' path before ``-00001-of-0000n.gguf``.
        max_tensors: at most this many tensors per shard (``--split-max-tensors``; 128 by default).
        max_size: at most this many bytes of tensor data per shard (``--split-max-size``): an int, or
            ``"500M"`` / ``"4G"`` (1e6 / 1e9 bytes); a larger tensor gets a shard of its own.
        no_tensor_first_split: the first shard holds only the metadata.
    Returns:
        the shards' paths, in order.
    Raises:
        GGUFError: a model that cannot be split as asked; ``pending_restore`` when the set has a journal
            of an interrupted split (``gguf-split --restore`` first).
        OSError: a prefix naming a directory, a missing directory, a write that failed.
    """
    if max_tensors is not None and max_size is not None:
        raise ValueError("either max_tensors or max_size, not both")
    n_tensors = 128 if max_tensors is None else integer(max_tensors, "max_tensors", 1, 0xFFFFFFFF)
    n_bytes = 0 if max_size is None else _size_of(max_size)
    return _core.split(_source_of(src), os.fspath(out_prefix), n_tensors, n_bytes, bool(no_tensor_first_split))


def merge(first_shard: ModelLike, dst: PathLike, *, drop_split_keys: bool = False) -> str:
    """Merges a split model into one file as ``gguf-split --merge`` does: the same bytes. As llama.cpp,
    the merged file keeps ``split.no`` and ``split.tensors.count``, and ``split.count`` becomes 0 (moved
    last); with ``drop_split_keys`` all three go, so that splitting a file and merging it back gives the
    original bytes.

    Args:
        first_shard: any shard of the model (or the shards' prefix), or an opened :class:`Model`.
        dst: the file to write; as ``gguf-split --merge``, it must not exist.
        drop_split_keys: drop the ``split.*`` keys instead (``--drop-split-keys``).
    Returns:
        ``dst``, as a str.
    Raises:
        FileExistsError: ``dst`` exists.
        GGUFError: not a shard of a split model (no ``split.count``), or shards that do not fit together.
        OSError: a file that cannot be read or written (nothing is left behind).
    """
    out = os.fspath(dst)
    if os.path.lexists(out) and not os.path.isdir(out):
        raise FileExistsError(errno.EEXIST, "the output file exists", out)
    _core.merge(_source_of(first_shard), out, not drop_split_keys)
    return out


def _type_arg(t: TypeLike | None) -> int | None:
    if t is None:
        return None
    if isinstance(t, str):  # llama-quantize reads a ggml type name in any case
        for member in GGMLType:
            if member.ggml_name.lower() == t.lower():
                return int(member)
        raise ValueError(f"unknown ggml type name: {t!r}")
    return int(GGMLType(int(t)))


def quantize_model(
    src: ModelLike,
    dst: PathLike,
    ftype: str | int,
    *,
    imatrix: PathLike | None = None,
    threads: int | None = None,
    progress: Callable[[int, int, str], Any] | None = None,
    allow_requantize: bool = False,
    output_tensor_type: TypeLike | None = None,
    token_embedding_type: TypeLike | None = None,
    leave_output_tensor: bool = False,
    pure: bool = False,
) -> None:
    """Quantizes a model as llama.cpp's ``llama-quantize`` does, to the same bytes ``gguf-quantize`` writes:
    the same type for every tensor (llama.cpp's mixes), the same metadata, the same quantizers. The
    threads convert rows ahead of the writing; memory stays bounded whatever the model's size.

    Args:
        src: the model: a file, any shard of a split model, or an opened :class:`Model`.
        dst: the file to write (not the input itself, by any name).
        ftype: llama-quantize's file type name in any case (``"Q4_K_M"``, ``"q8_0"``, ``"IQ2_XS"``...) or
            its number (``15``).
        imatrix: an importance matrix file (llama-imatrix's GGUF or legacy ``.dat``); recorded under
            ``quantize.imatrix.*`` as llama-quantize records it (``quantize.imatrix.file`` is the path as
            given here). IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS and Q2_K_S need one.
        threads: threads converting, the calling one included (the bytes do not depend on it), at
            least 1 (more than 1024 count as 1024); every core when ``None``.
        progress: called as ``progress(done, total, name)`` after each tensor is written, in file order
            (``done`` from 1 to ``total``; ``name`` the tensor just written), from the calling thread
            with the GIL held. An exception it raises stops the work: nothing is written, and the
            exception propagates. Ctrl-C does the same (KeyboardInterrupt), with or without a callback.
        allow_requantize: accept tensors that are already quantized (dequantized, then quantized).
        output_tensor_type: ``output.weight``'s type (a :class:`GGMLType`, its id or name).
        token_embedding_type: ``token_embd.weight``'s type.
        leave_output_tensor: ``output.weight`` keeps its type.
        pure: every weight gets the file type's main type (no mix; fallbacks aside).
    Raises:
        GGUFError: a model or imatrix that cannot be used (a quantized tensor without
            ``allow_requantize``, a type that needs an importance matrix without one, an imatrix entry of
            the wrong length, a row ggml cannot quantize), or ``dst`` is the input.
        ValueError: an unknown file type or tensor type.
        OSError: a file that cannot be read or written (nothing is left behind).
    """
    if progress is not None and not callable(progress):
        raise TypeError("progress must be callable as progress(done, total, name)")
    # as everywhere: at least 1, and a larger count than is useful means every useful thread
    n_threads = 0 if threads is None else min(integer(threads, "threads", 1), 1024)
    _core.quantize_model(
        _source_of(src),
        os.fspath(dst),
        ftype if isinstance(ftype, str) else integer(ftype, "ftype"),
        None if imatrix is None else os.fspath(imatrix),
        "" if imatrix is None else os.fspath(imatrix),
        n_threads,
        progress,
        bool(allow_requantize),
        _type_arg(output_tensor_type),
        _type_arg(token_embedding_type),
        bool(leave_output_tensor),
        bool(pure),
    )


def facts(
    model: ModelLike,
    *,
    context: int | None = None,
    cache_type: str | None = None,
    cache_type_k: str | None = None,
    cache_type_v: str | None = None,
    swa_full: bool = False,
    ubatch: int = 512,
) -> dict[str, Any]:
    """What a model is: the object ``gguf-info --json`` prints, as a dict with the same keys and values
    (documented in docs/FACTS.md): ``architecture``, ``name``, ``n_params`` (as llama.cpp counts them),
    ``size_label``, ``file_type`` (``"Q4_K_M"``: declared or guessed), ``context_length``, ``n_vocab``,
    ``census`` (tensors, elements, bytes and bits per weight of each type), ``memory`` (the weights and
    the KV cache llama.cpp allocates at a context length; ``kv_cache`` ``None`` with ``error`` when it
    cannot be estimated), and the rest.

    ``file`` is the path as given, or the first shard's path for a :class:`Model` (``None`` for one parsed
    from a buffer). A non-finite float (``rope_freq_base``) is a float here, where the JSON holds a string.

    Args:
        model: a file, any shard of a split model (or the shards' prefix), or an opened :class:`Model`.
        context: the context length for the memory estimate (``--ctx``); the model's own when ``None``.
        cache_type: the KV cache's type for K and V (``"f16"``, ``"q8_0"``...; ``--cache-type``).
        cache_type_k: K's alone (``--cache-type-k``); overrides ``cache_type``.
        cache_type_v: V's alone (``--cache-type-v``).
        swa_full: sliding-window layers cache the whole context (``--swa-full``).
        ubatch: the physical batch size llama.cpp adds to a sliding window (``--ubatch``).
    Raises:
        GGUFError: a file that is not valid GGUF, or whose standard keys have the wrong types.
        OSError: a file that cannot be read.
        ValueError: an unknown cache type, a context or ubatch outside 1 to 2**31.
    """
    n_context = 0 if context is None else integer(context, "context", 1, 1 << 31)
    n_ubatch = integer(ubatch, "ubatch", 1, 1 << 31)
    k = cache_type_k or cache_type or "f16"
    v = cache_type_v or cache_type or "f16"
    if isinstance(model, Model):
        src = model._open()
        file = model.paths[0] if model.paths else None
    else:
        src = _source_of(model)
        file = src
    return _core.facts(src, file, n_context, k, v, bool(swa_full), n_ubatch)
