"""A software prefetch for compiled loops that visit the rows of a large array in random order.

The dual coordinate descent of the linear SVM (:func:`kernbench.solvers.dual_cd.dcd_solve`)
visits the rows of the m × J column buffer in a random permutation. Once the buffer outgrows the
caches (10⁶ rows × 100 columns is 100 MB), every row is a main-memory miss that the core waits
for, although its index is known several rows ahead. :func:`prefetch_item` (the cache line of one
entry of a 2-D array) and :func:`prefetch_entry` (of a 1-D array) tell the CPU to start fetching
it; they change no value the loop computes, only when the memory arrives.
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# LLVM 15 moved to opaque pointers, which renamed the intrinsic's pointer suffix
_PREFETCH = "llvm.prefetch.p0" if llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"


def _prefetch_codegen(context, builder, signature, args):
    """A prefetch of the element of ``args[0]`` at the integer indices ``args[1:]``."""
    aryty = signature.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    inds = [
        context.cast(builder, value, ty, types.intp)
        for value, ty in zip(args[1:], signature.args[1:], strict=True)
    ]
    ptr = cgutils.get_item_pointer2(
        context,
        builder,
        data=ary.data,
        shape=cgutils.unpack_tuple(builder, ary.shape),
        strides=cgutils.unpack_tuple(builder, ary.strides),
        layout=aryty.layout,
        inds=inds,
        boundscheck=False,
    )
    raw = builder.bitcast(ptr, cgutils.voidptr_t)
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH)
    # read access, high temporal locality (keep in every cache level), data cache
    builder.call(fn, [raw, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
    return context.get_dummy_value()


def _is_array(array, ndim: int) -> bool:
    return isinstance(array, types.Array) and array.ndim == ndim


@intrinsic
def prefetch_item(typingctx, array, row, column):  # pragma: no cover - numba
    """Prefetch the cache line holding ``array[row, column]`` (2-D ``array``) into all cache
    levels. A hint only (no fault on any address): nothing the caller computes depends on it."""
    if not (
        _is_array(array, 2) and isinstance(row, types.Integer) and isinstance(column, types.Integer)
    ):
        return None
    return types.void(array, row, column), _prefetch_codegen


@intrinsic
def prefetch_entry(typingctx, array, i):  # pragma: no cover - numba
    """Prefetch the cache line holding ``array[i]`` (1-D ``array``); a hint only."""
    if not (_is_array(array, 1) and isinstance(i, types.Integer)):
        return None
    return types.void(array, i), _prefetch_codegen
