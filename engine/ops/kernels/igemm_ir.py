"""The integer GEMM kernels of :mod:`igemm` as LLVM IR, built with llvmlite's ``ir``:
``igemm`` (AVX2 ``vpmaddwd`` over int16 pairs) and ``ivnni`` (AVX-512 VNNI ``vpdpbusd`` over
int8 quads), each a loop over row chunks and column blocks around register tiles of
:data:`ROWS` x :data:`COLS`; and ``ivnni_rq``, the VNNI loop whose tiles (two column blocks:
a d32 slice's 32 channels) requantize their sums as the d32 Supernodes do and store the
codes, the sums never leaving the registers (:func:`_requant_tile`; its driver is
:mod:`gemm_requant`); and, with AVX-512 IFMA and VBMI, ``ivnni_d32``
(:mod:`igemm_d32_ir`: a d32 Supernode reading its input where it lies). :mod:`igemm`
compiles them, caches the object code and calls them; the layouts and the arithmetic are
described there.
"""

from __future__ import annotations

#: Columns per block (two ymm registers of 8 int32) and rows per register tile.
COLS = 16
ROWS = 6


def _ir_types():  # -> (i16, i32, i64, <16 x i16>, <8 x i32>, i16*, i32*, const)
    """The IR types the kernel uses, and ``const(value, type=i64)`` for integer constants."""
    from llvmlite import ir

    i16, i32, i64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)

    def const(value: int, ty: ir.Type = i64) -> ir.Constant:
        return ir.Constant(ty, value)

    return (i16, i32, i64, ir.VectorType(i16, 16), ir.VectorType(i32, 8), i16.as_pointer(),
            i32.as_pointer(), const)


def ir_module(triple: str, vnni: bool = False, d32: bool = False
              ):  # -> llvmlite.ir.Module
    """The kernels as LLVM IR (module text: tiles of ROWS x 16, chunks of rows): ``igemm``,
    and ``ivnni`` and ``ivnni_rq`` when ``vnni``; ``ivnni_d32`` (:mod:`igemm_d32_ir`: AVX-512
    IFMA and VBMI too) when ``d32``."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    module = ir.Module("hexscope_igemm")
    module.triple = triple
    pmadd = ir.Function(module, ir.FunctionType(v8, [v16, v16]), "llvm.x86.avx2.pmadd.wd")
    _outer(module, "igemm", p16, 2,
           {rows: _tile(module, pmadd, rows) for rows in range(1, ROWS + 1)})
    if vnni:
        v16x32 = ir.VectorType(i32, 16)
        dot = ir.Function(module, ir.FunctionType(v16x32, [v16x32] * 3),
                          "llvm.x86.avx512.vpdpbusd.512")
        _outer(module, "ivnni", ir.IntType(8).as_pointer(), 4,
               {rows: _tile8(module, dot, rows) for rows in range(1, ROWS + 1)})
        _outer(module, "ivnni_rq", ir.IntType(8).as_pointer(), 4,
               {rows: _tile8(module, dot, rows, requant=True) for rows in range(1, ROWS + 1)},
               requant=True)
        if d32:
            from hexscope.engine.ops.kernels.igemm_d32_ir import add_d32_kernel

            add_d32_kernel(module)
    return module


def _requant_types():  # -> the extra arguments of a requantizing kernel (_outer's doc)
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    return [p32, i64.as_pointer(), p32, i64, i64, p32, p32, ir.IntType(8).as_pointer(),
            i64.as_pointer(), p32, i64]


def _outer(module, name: str, elem_ptr, per_word: int, tiles: dict,
           requant: bool = False) -> None:
    """void name(A, lda, m, k, B, nb, off, C, ldc, mc, bounds, rowterm): for m0 in 0..m by
    mc: for j in 0..nb: for i in m0..min(m0 + mc, m) by ROWS: tile. ``lda`` and the packed
    blocks count elements (``per_word`` of them share a 32-bit lane).

    ``requant``: the tiles requantize their sums into a d32 memory instead of storing them
    (C, ldc and bounds unused), with the arguments after rowterm (folded int32, recip int64,
    mask int32, one per column; shamt, after_shift; lo, hi int32 per column; out, rowoff
    int64 per row, rowflag int32 per row, slice stride: :func:`_requant_tile`). Column block
    j writes the bytes at out + rowoff[row] + (j >> 1) * slice + (j & 1) * 16."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    extra = _requant_types() if requant else []
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [
        elem_ptr, i64, i64, i64, elem_ptr, i64, p32, p32, i64, i64, p32, p32, *extra]), name)
    a, lda, m, k, b, nb, off, c, ldc, mc, bounds, rowterm = fn.args[:12]
    entry, m_head, m_body, j_head, j_body, i_head, i_body, i_next, j_next, m_next, done = (
        fn.append_basic_block(name) for name in (
            "entry", "m_head", "m_body", "j_head", "j_body", "i_head", "i_body", "i_next",
            "j_next", "m_next", "done"))
    bld = ir.IRBuilder(entry)
    m0_var, j_var, i_var = bld.alloca(i64), bld.alloca(i64), bld.alloca(i64)
    words = bld.udiv(bld.add(k, const(per_word - 1)), const(per_word))
    block = bld.mul(words, const(per_word * COLS))
    bld.store(const(0), m0_var)
    bld.branch(m_head)

    bld.position_at_end(m_head)
    bld.cbranch(bld.icmp_signed("<", bld.load(m0_var), m), m_body, done)
    bld.position_at_end(m_body)
    bld.store(const(0), j_var)
    bld.branch(j_head)

    bld.position_at_end(j_head)
    bld.cbranch(bld.icmp_signed("<", bld.load(j_var), nb), j_body, m_next)
    bld.position_at_end(j_body)
    bld.store(bld.load(m0_var), i_var)
    bld.branch(i_head)

    bld.position_at_end(i_head)
    m0 = bld.load(m0_var)
    end = bld.add(m0, mc)
    end = bld.select(bld.icmp_signed("<", end, m), end, m)
    bld.cbranch(bld.icmp_signed("<", bld.load(i_var), end), i_body, j_next)
    bld.position_at_end(i_body)
    i, j = bld.load(i_var), bld.load(j_var)
    left = bld.sub(end, i)
    rows = bld.select(bld.icmp_signed("<", left, const(ROWS)), left, const(ROWS))
    args = [bld.gep(a, [bld.mul(i, lda)]), lda, k, bld.gep(b, [bld.mul(j, block)]),
            bld.gep(off, [bld.mul(j, const(COLS))]),
            bld.gep(c, [bld.add(bld.mul(i, ldc), bld.mul(j, const(COLS)))]), ldc, bounds,
            bld.gep(rowterm, [i])]
    if requant:
        fb, rc, mask, shamt, after, lo, hi, out, rowoff, rowflag, slice_ = fn.args[12:]
        col = bld.mul(j, const(COLS))
        at = bld.mul(bld.lshr(j, const(1)), slice_)       # j is even
        args += [bld.gep(fb, [col]), bld.gep(rc, [col]), bld.gep(mask, [col]), shamt, after,
                 bld.gep(lo, [col]), bld.gep(hi, [col]), bld.gep(out, [at]),
                 bld.gep(rowoff, [i]), bld.gep(rowflag, [i])]
    cases = [fn.append_basic_block(f"rows{r}") for r in range(1, ROWS + 1)]
    switch = bld.switch(rows, cases[-1])
    for r, case in enumerate(cases, start=1):
        switch.add_case(const(r), case)
        case_bld = ir.IRBuilder(case)
        case_bld.call(tiles[r], args)
        case_bld.branch(i_next)
    bld.position_at_end(i_next)
    bld.store(bld.add(bld.load(i_var), const(ROWS)), i_var)
    bld.branch(i_head)

    bld.position_at_end(j_next)
    # a requantizing tile takes two column blocks: a d32 slice's 32 channels
    bld.store(bld.add(bld.load(j_var), const(2 if requant else 1)), j_var)
    bld.branch(j_head)
    bld.position_at_end(m_next)
    bld.store(bld.add(bld.load(m0_var), mc), m0_var)
    bld.branch(m_head)
    bld.position_at_end(done)
    bld.ret_void()


def _broadcast(builder, word):  # -> <8 x i32>
    """An i32 word into all 8 lanes."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    vec = builder.insert_element(ir.Constant(v8, None), word, const(0, i32))
    return builder.shuffle_vector(vec, ir.Constant(v8, None), ir.Constant(v8, [0] * 8))


def _broadcast16(builder, word):  # -> <16 x i32>
    """An i32 word into all 16 lanes."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    vec = ir.VectorType(i32, 16)
    one = builder.insert_element(ir.Constant(vec, None), word, const(0, i32))
    return builder.shuffle_vector(one, ir.Constant(vec, None), ir.Constant(vec, [0] * 16))


def _store_tile(bld, final, c, ldc, bounds) -> None:
    """Store the accumulators (pairs of <8 x i32> per row) as rows of ``c`` and fold them
    into the running minima (bounds[0:8]) and maxima (bounds[8:16])."""
    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    lo_ptr = bld.bitcast(bounds, v8.as_pointer())
    hi_ptr = bld.bitcast(bld.gep(bounds, [const(8)]), v8.as_pointer())
    lo, hi = bld.load(lo_ptr, align=4), bld.load(hi_ptr, align=4)
    for r, acc in enumerate(final):
        row = bld.gep(c, [bld.mul(ldc, const(r))])
        for h in range(2):
            bld.store(acc[h], bld.bitcast(bld.gep(row, [const(h * 8)]), v8.as_pointer()),
                      align=4)
            lo = bld.select(bld.icmp_signed("<", acc[h], lo), acc[h], lo)
            hi = bld.select(bld.icmp_signed(">", acc[h], hi), acc[h], hi)
    bld.store(lo, lo_ptr, align=4)
    bld.store(hi, hi_ptr, align=4)


def _k_loop(bld, blocks, init: list, row_ptrs: list, words, per_word: int, step) -> list:
    """The K loop of a tile: ``words`` steps of ``per_word`` codes per row, each row's pair
    of accumulators starting from ``init[row]``; emitted into ``blocks`` = (entry, loop,
    after), the builder left at ``after``. Returns the accumulators there (the loop's, or
    ``init`` when K has no whole word)."""
    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    entry, loop, after = blocks
    bld.position_at_end(loop)
    k = bld.phi(i64)
    accs = [[bld.phi(v.type) for v in start] for start in init]
    k.add_incoming(const(0), entry)
    for acc, start in zip(accs, init, strict=True):
        for h in range(len(start)):
            acc[h].add_incoming(start[h], entry)
    # a word of codes is read as one unaligned i32 and broadcast by ``step``
    loaded = [bld.load(bld.bitcast(bld.gep(ptr, [bld.mul(k, const(per_word))]), p32),
                       align=1) for ptr in row_ptrs]
    new = step(bld, accs, loaded, k)
    k_next = bld.add(k, const(1))
    k.add_incoming(k_next, loop)
    for acc, acc_new in zip(accs, new, strict=True):
        for h in range(len(acc)):
            acc[h].add_incoming(acc_new[h], loop)
    bld.cbranch(bld.icmp_signed("<", k_next, words), loop, after)

    bld.position_at_end(after)
    merged = [[bld.phi(v.type) for v in start] for start in init]
    for acc, start, acc_new in zip(merged, init, new, strict=True):
        for h in range(len(acc)):
            acc[h].add_incoming(start[h], entry)
            acc[h].add_incoming(acc_new[h], loop)
    return merged


def _tile8(module, dot, rows: int, requant: bool = False):  # -> llvmlite.ir.Function
    """tile(A, lda, k, Bblock, off, C, ldc, bounds, rowterm): C[r, 0:16] = off + rowterm[r]
    + sum_k A[r, k] B[k, 0:16] for ``rows`` rows of int8 A and uint8 B, by ``vpdpbusd``
    (4 products of unsigned by signed bytes added into each int32 lane); bounds as
    :func:`_tile`. ``requant``: the sums requantized into codes instead
    (:func:`_requant_tile`, its arguments after rowterm)."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    i8 = ir.IntType(8)
    p8 = i8.as_pointer()
    extra = _requant_types()[:10] if requant else []
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [p8, i64, i64, p8, p32, p32, i64,
                                                             p32, p32, *extra]),
                     f"tile8{'rq' if requant else ''}_{rows}")
    fn.linkage = "internal"
    a, lda, k, b, off, c, ldc, bounds, rowterm = fn.args[:9]
    for ptr in (a, b, off, c, bounds, rowterm):
        ptr.add_attribute("noalias")
    entry, loop, after, tail, store = (fn.append_basic_block(name) for name in (
        "entry", "loop", "after", "tail", "store"))
    # one 512-bit accumulator per row and column block: a quad of the block's 16 columns is
    # 64 bytes, one zmm (vpdpbusd on zmm: half the instructions of two ymm, full width on
    # Zen 5); a requantizing tile takes two blocks (32 channels: one d32 slice), each data
    # word broadcast once for both
    nblk = 2 if requant else 1
    v16x32 = ir.VectorType(i32, 16)
    bld = ir.IRBuilder(entry)
    cols = [bld.load(bld.bitcast(bld.gep(off, [const(16 * h)]), v16x32.as_pointer()),
                     align=4) for h in range(nblk)]
    init = []
    for r in range(rows):
        term = _broadcast16(bld, bld.load(bld.gep(rowterm, [const(r)]), align=4))
        init.append([bld.add(cols[h], term) for h in range(nblk)])
    quads = bld.lshr(k, const(2))
    row_ptrs = [bld.gep(a, [bld.mul(lda, const(r))]) for r in range(rows)]
    # the next block starts ceil(K / 4) quads of 64 bytes later
    block = bld.mul(bld.lshr(bld.add(k, const(3)), const(2)), const(64))
    b_vecs = [bld.bitcast(bld.gep(b, [bld.mul(block, const(h))]), v16x32.as_pointer())
              for h in range(nblk)]
    bld.cbranch(bld.icmp_signed(">", quads, const(0)), loop, after)

    def step(builder, accs, words, quad):
        w = [builder.load(builder.gep(vecs, [quad]), align=1) for vecs in b_vecs]
        new = []
        for acc, word in zip(accs, words, strict=True):
            x = _broadcast16(builder, word)
            # the filter's codes are the unsigned operand, the centred data the signed one
            new.append([builder.call(dot, [acc[h], w[h], x]) for h in range(nblk)])
        return new

    merged = _k_loop(bld, (entry, loop, after), init, row_ptrs, quads, 4, step)
    rem = bld.and_(k, const(3))
    bld.cbranch(bld.icmp_signed("!=", rem, const(0)), tail, store)

    # K not a multiple of 4: the last word holds the 1 to 3 codes left and zeros (the packed
    # filter holds zeros there too). Each byte is read at an index clamped into the row and
    # then kept or dropped, so nothing past the row is touched.
    bld.position_at_end(tail)
    base = bld.mul(quads, const(4))
    last = bld.sub(k, const(1))
    words = []
    for ptr in row_ptrs:
        word = ir.Constant(i32, 0)
        for t in range(3):
            idx = bld.add(base, const(t))
            idx = bld.select(bld.icmp_signed("<", idx, last), idx, last)
            byte = bld.zext(bld.load(bld.gep(ptr, [idx]), align=1), i32)
            byte = bld.select(bld.icmp_signed("<", const(t), rem), byte, ir.Constant(i32, 0))
            word = bld.or_(word, bld.shl(byte, ir.Constant(i32, 8 * t)))
        words.append(word)
    tailed = step(bld, merged, words, quads)
    bld.branch(store)

    bld.position_at_end(store)
    joined = []
    for acc_after, acc_tail in zip(merged, tailed, strict=True):
        row = []
        for h in range(nblk):
            acc = bld.phi(v16x32)
            acc.add_incoming(acc_after[h], after)
            acc.add_incoming(acc_tail[h], tail)
            row.append(acc)
        joined.append(row)
    if requant:
        _requant_tile(bld, joined, *fn.args[9:])
    else:
        # _store_tile takes each row as two halves of 8 lanes
        _store_tile(bld, [[bld.shuffle_vector(acc[0], ir.Constant(v16x32, None), ir.Constant(
            ir.VectorType(i32, 8), list(range(h * 8, h * 8 + 8)))) for h in range(2)]
            for acc in joined], c, ldc, bounds)
    bld.ret_void()
    return fn


def _requant_tile(bld, accs, fb, rc, mask, shamt, after, lo, hi, out, rowoff,
                  rowflag) -> None:
    """The accumulators (per row, <16 x i32> per column block: one pixel's channels)
    requantized as :mod:`supernode_requant` does, lane for lane: s = (acc & mask) + folded
    (wrapping; the mask drops the lanes past the filter's columns, whose sums are the row
    term alone), t = s << shamt, v = (int64(t) x recip + 2**30) >> 31, code = clamp(v, 0,
    255), stored as 16 bytes a block at out + rowoff[r]; where rowflag[r] is not 0 the
    lanes' running minima and maxima (lo, hi: of t when ``after`` is not 0, else of s)
    take the row in."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    lanes = ir.VectorType(i32, 16)
    wide = ir.VectorType(i64, 16)
    nblk = len(accs[0])

    def vec(ptr, h, ty=lanes):
        return bld.load(bld.bitcast(bld.gep(ptr, [const(16 * h)]), ty.as_pointer()), align=4)

    fbv = [vec(fb, h) for h in range(nblk)]
    maskv = [vec(mask, h) for h in range(nblk)]
    rcv = [vec(rc, h, wide) for h in range(nblk)]
    sh = _broadcast16(bld, bld.trunc(shamt, i32))
    use_t = bld.icmp_signed("!=", after, const(0))
    lov = [vec(lo, h) for h in range(nblk)]
    hiv = [vec(hi, h) for h in range(nblk)]
    half = ir.Constant(wide, [1 << 30] * 16)
    bit31 = ir.Constant(wide, [31] * 16)
    zero = ir.Constant(lanes, [0] * 16)
    top = ir.Constant(lanes, [255] * 16)
    low32 = ir.Constant(wide, [-(1 << 31)] * 16)
    high32 = ir.Constant(wide, [(1 << 31) - 1] * 16)
    for r, row in enumerate(accs):
        counted = bld.icmp_signed("!=", bld.load(bld.gep(rowflag, [const(r)]), align=4),
                                  ir.Constant(i32, 0))
        at = bld.gep(out, [bld.load(bld.gep(rowoff, [const(r)]), align=8)])
        for h, acc in enumerate(row):
            s = bld.add(bld.and_(acc, maskv[h]), fbv[h])
            t = bld.shl(s, sh)
            e = bld.select(use_t, t, s)
            low = bld.select(bld.icmp_signed("<", e, lov[h]), e, lov[h])
            high = bld.select(bld.icmp_signed(">", e, hiv[h]), e, hiv[h])
            lov[h] = bld.select(counted, low, lov[h])
            hiv[h] = bld.select(counted, high, hiv[h])
            v = bld.ashr(bld.add(bld.mul(bld.sext(t, wide), rcv[h]), half), bit31)
            # clamped to int32 first (a saturating narrowing: the same code after the clamp
            # to 0..255), then to 0..255 in 32-bit lanes, then narrowed: fewer 64-bit steps
            v = bld.select(bld.icmp_signed("<", v, low32), low32, v)
            v = bld.select(bld.icmp_signed(">", v, high32), high32, v)
            v = bld.trunc(v, lanes)
            v = bld.select(bld.icmp_signed("<", v, zero), zero, v)
            v = bld.select(bld.icmp_signed(">", v, top), top, v)
            codes = bld.trunc(v, ir.VectorType(ir.IntType(8), 16))
            bld.store(codes, bld.bitcast(bld.gep(at, [const(16 * h)]),
                                         codes.type.as_pointer()), align=1)
    for h in range(nblk):
        bld.store(lov[h], bld.bitcast(bld.gep(lo, [const(16 * h)]), lanes.as_pointer()),
                  align=4)
        bld.store(hiv[h], bld.bitcast(bld.gep(hi, [const(16 * h)]), lanes.as_pointer()),
                  align=4)


def _tile(module, pmadd, rows: int):  # -> llvmlite.ir.Function
    """tile(A, lda, k, Bblock, off, C, ldc, bounds): C[r, 0:16] = off + sum_k A[r, k]
    B[k, 0:16] for ``rows`` rows, accumulated in 2 * rows ymm registers; the 8 lanes of
    bounds[0:8] keep running minima of what is stored, bounds[8:16] running maxima."""
    from llvmlite import ir

    i16, i32, i64, v16, v8, p16, p32, const = _ir_types()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [p16, i64, i64, p16, p32, p32, i64,
                                                             p32, p32]), f"tile{rows}")
    fn.linkage = "internal"
    a, lda, k, b, off, c, ldc, bounds, _rowterm = fn.args     # no row term here
    for ptr in (a, b, off, c, bounds):
        ptr.add_attribute("noalias")
    entry, loop, after, tail, store = (fn.append_basic_block(name) for name in (
        "entry", "loop", "after", "tail", "store"))
    bld = ir.IRBuilder(entry)
    init = [bld.load(bld.bitcast(bld.gep(off, [const(h * 8)]), v8.as_pointer()), align=4)
            for h in range(2)]
    pairs = bld.lshr(k, const(1))
    row_ptrs = [bld.gep(a, [bld.mul(lda, const(r))]) for r in range(rows)]
    b_vecs = bld.bitcast(b, v16.as_pointer())
    bld.cbranch(bld.icmp_signed(">", pairs, const(0)), loop, after)

    def broadcast(builder, word):       # an i32 pair of codes into all 8 lanes, as 16 x i16
        return builder.bitcast(_broadcast(builder, word), v16)

    def step(builder, accs, words, pair_index):
        w0 = builder.load(builder.gep(b_vecs, [builder.mul(pair_index, const(2))]), align=2)
        w1 = builder.load(builder.gep(b_vecs, [builder.add(builder.mul(pair_index, const(2)),
                                                           const(1))]), align=2)
        new = []
        for (acc0, acc1), word in zip(accs, words, strict=True):
            x = broadcast(builder, word)
            new.append((builder.add(acc0, builder.call(pmadd, [x, w0])),
                        builder.add(acc1, builder.call(pmadd, [x, w1]))))
        return new

    merged = _k_loop(bld, (entry, loop, after), [init] * rows, row_ptrs, pairs, 2, step)
    bld.cbranch(bld.icmp_signed("!=", bld.and_(k, const(1)), const(0)), tail, store)

    # An odd K: the last code pairs with 0 (the packed filter holds 0 there too); reading
    # only the one int16 never touches memory past the row.
    bld.position_at_end(tail)
    last = bld.sub(k, const(1))
    words = [bld.zext(bld.load(bld.gep(ptr, [last]), align=2), i32) for ptr in row_ptrs]
    tailed = step(bld, merged, words, pairs)
    bld.branch(store)

    bld.position_at_end(store)
    final = [(bld.phi(v8), bld.phi(v8)) for _ in range(rows)]
    for acc, acc_after, acc_tail in zip(final, merged, tailed, strict=True):
        for h in range(2):
            acc[h].add_incoming(acc_after[h], after)
            acc[h].add_incoming(acc_tail[h], tail)
    _store_tile(bld, final, c, ldc, bounds)
    bld.ret_void()
    return fn


__all__ = ["COLS", "ROWS", "ir_module"]
