"""``ivnni_d32``: a d32 Supernode's convolution and requantization as one LLVM IR kernel that
reads the d32 input where it lies (no unpacked, centred copy or patch matrix, no row sums)
and writes the output codes into the d32 output memory from its register tiles.

Why it can read the codes as they are: ``vpdpbusd`` multiplies unsigned bytes by signed
ones. :mod:`igemm_ir`'s ``ivnni_rq`` takes the filter's codes as the unsigned operand and the
data centred (x - 128) as the signed one, which needs a row term (-zf x the row's sum of
x - 128) per pixel. When every filter code is within [zf - 128, zf + 127] (TFLite's int8
weights, zero 128: all of MobileNetV2's), w - zf is the signed operand and the data codes x
the unsigned one: sum (x - zx)(w - zf) = sum x (w - zf) - zx sum (w - zf), the last term one
per channel, folded into the bias (:mod:`conv_d32`). The lanes of a tap's last quad past
the depth (a d32 slice's padding) meet zero weights, so whatever bytes they hold add nothing.

Addressing. Window p's quad q (4 codes) is at ``a + inoff[p] + tapoff[q]`` (in a d32 memory:
the window's first tap's pixel, then each tap's pixel and depth slice; in a gathered buffer:
4q); the window's 32 output codes of output slice j go to ``out + outoff[p] + j * oslice``.
The packed filter is ``nb`` blocks of 16 channels, each ``nq`` quads of 64 bytes (4 signed
bytes per channel). The accumulators start from fb, so s comes out of the sums' loop.

The requantization (of :mod:`supernode_requant`, lane for lane): s = sum + fb (wrapping),
t = s << shamt, code = clamp((t x recip + 2**30) >> 31, 0, 255). The product of the int32 t
and recip (0 <= recip < 2**31) is done in 52-bit lanes (AVX-512 IFMA ``vpmadd52luq``), from
t clamped first to [tlo, thi], the per-channel range whose codes are 0..255 (computed by
the driver: the code is monotonic in t and moves by at most one per step of t, so clamping t
clamps the code): then 2 (t x recip + 2**30) = t x (2 recip) + 2**31 lies in [0, 2**40),
its byte 4 is the code, and the low 52 bits of the product of t's 64-bit sign extension
(mod 2**52) leave that byte as it is. Four 64-bit multiplies, two saturating narrowings, a
clamp and an unsigned narrowing per 16 codes in ``ivnni_rq`` become two multiply-adds and
one byte permutation (``vpermt2b``), the clamp on t instead. The lanes' minima and maxima
of t take the rows below ``ncount`` (the data columns).
"""

from __future__ import annotations

from hexscope.engine.ops.kernels.igemm_ir import COLS, ROWS


def add_d32_kernel(module) -> None:  # module: llvmlite.ir.Module
    """Add ``ivnni_d32`` (and its tiles) to ``module`` (needs AVX-512 VNNI, IFMA, VBMI):

    void ivnni_d32(a, inoff, m, nq, tapoff, b, nb, fb, tlo, thi, r2, shamt, lo, hi, out,
    outoff, oslice, ncount, mc): for m0 in 0..m by mc: for each pair of column blocks j (one
    output slice): for i in m0..min(m0 + mc, m) by ROWS: the tile of windows i.. (module
    doc). Pointers: a, b, out i8; inoff, outoff i32 per window, tapoff i32 per quad; fb,
    tlo, thi, lo, hi i32 per channel; r2 i64 per channel (2 x recip). ``nb`` is even."""
    from llvmlite import ir

    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    p8, p32, p64 = i8.as_pointer(), i32.as_pointer(), i64.as_pointer()
    v16 = ir.VectorType(i32, 16)
    v8q = ir.VectorType(i64, 8)
    dot = _declare(module, "llvm.x86.avx512.vpdpbusd.512", v16, [v16] * 3)
    madd = _declare(module, "llvm.x86.avx512.vpmadd52l.uq.512", v8q, [v8q] * 3)
    tiles = {r: _tile(module, dot, madd, r) for r in range(1, ROWS + 1)}
    args = [p8, p32, i64, i64, p32, p8, i64, p32, p32, p32, p64, i64, p32, p32, p8, p32, i64,
            i64, i64]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), args), "ivnni_d32")
    (a, inoff, m, nq, tapoff, b, nb, fb, tlo, thi, r2, shamt, lo, hi, out, outoff, oslice,
     ncount, mc) = fn.args

    def const(v: int) -> ir.Constant:
        return ir.Constant(i64, v)

    blocks = {name: fn.append_basic_block(name) for name in (
        "entry", "m_head", "m_body", "j_head", "j_body", "i_head", "i_body", "i_next",
        "j_next", "m_next", "done")}
    bld = ir.IRBuilder(blocks["entry"])
    m0_var, j_var, i_var = bld.alloca(i64), bld.alloca(i64), bld.alloca(i64)
    # the slice's extremes, kept in registers across its tiles (allocas LLVM promotes)
    ext_vars = [bld.alloca(v16) for _ in range(4)]
    block_bytes = bld.mul(nq, const(4 * COLS))
    bld.store(const(0), m0_var)
    bld.branch(blocks["m_head"])

    bld.position_at_end(blocks["m_head"])
    bld.cbranch(bld.icmp_signed("<", bld.load(m0_var), m), blocks["m_body"], blocks["done"])
    bld.position_at_end(blocks["m_body"])
    bld.store(const(0), j_var)
    bld.branch(blocks["j_head"])

    bld.position_at_end(blocks["j_head"])
    bld.cbranch(bld.icmp_signed("<", bld.load(j_var), nb), blocks["j_body"], blocks["m_next"])
    bld.position_at_end(blocks["j_body"])
    j = bld.load(j_var)
    col = bld.mul(j, const(COLS))

    def vec(ptr, at, ty=v16):
        return bld.load(bld.bitcast(bld.gep(ptr, [bld.add(col, const(at))]), ty.as_pointer()),
                        align=4)

    # one output slice's terms, loaded once for all its tiles: fb, tlo, thi (two blocks
    # each), 2 recip (four halves)
    terms = [vec(fb, 0), vec(fb, 16), vec(tlo, 0), vec(tlo, 16), vec(thi, 0), vec(thi, 16),
             *(vec(r2, at, v8q) for at in (0, 8, 16, 24))]
    for var, ptr, at in zip(ext_vars, (lo, lo, hi, hi), (0, 16, 0, 16), strict=True):
        bld.store(vec(ptr, at), var)
    b_j = bld.gep(b, [bld.mul(j, block_bytes)])
    out_j = bld.gep(out, [bld.mul(bld.lshr(j, const(1)), oslice)])
    bld.store(bld.load(m0_var), i_var)
    bld.branch(blocks["i_head"])

    bld.position_at_end(blocks["i_head"])
    m0 = bld.load(m0_var)
    end = bld.add(m0, mc)
    end = bld.select(bld.icmp_signed("<", end, m), end, m)
    bld.cbranch(bld.icmp_signed("<", bld.load(i_var), end), blocks["i_body"], blocks["j_next"])
    bld.position_at_end(blocks["i_body"])
    i = bld.load(i_var)
    left = bld.sub(end, i)
    rows = bld.select(bld.icmp_signed("<", left, const(ROWS)), left, const(ROWS))
    call_args = [a, bld.gep(inoff, [i]), nq, tapoff, b_j, block_bytes, shamt, out_j,
                 bld.gep(outoff, [i]), bld.sub(ncount, i), *terms]
    cases = [fn.append_basic_block(f"rows{r}") for r in range(1, ROWS + 1)]
    switch = bld.switch(rows, cases[-1])
    for r, case in enumerate(cases, start=1):
        switch.add_case(const(r), case)
        case_bld = ir.IRBuilder(case)
        got = case_bld.call(tiles[r], [*call_args, *(case_bld.load(v) for v in ext_vars)])
        for k, var in enumerate(ext_vars):
            case_bld.store(case_bld.extract_value(got, k), var)
        case_bld.branch(blocks["i_next"])
    bld.position_at_end(blocks["i_next"])
    bld.store(bld.add(bld.load(i_var), const(ROWS)), i_var)
    bld.branch(blocks["i_head"])

    bld.position_at_end(blocks["j_next"])
    for var, ptr, at in zip(ext_vars, (lo, lo, hi, hi), (0, 16, 0, 16), strict=True):
        bld.store(bld.load(var), bld.bitcast(bld.gep(ptr, [bld.add(col, const(at))]),
                                             v16.as_pointer()), align=4)
    bld.store(bld.add(bld.load(j_var), const(2)), j_var)
    bld.branch(blocks["j_head"])
    bld.position_at_end(blocks["m_next"])
    bld.store(bld.add(bld.load(m0_var), mc), m0_var)
    bld.branch(blocks["m_head"])
    bld.position_at_end(blocks["done"])
    bld.ret_void()


def _declare(module, name: str, ret, args):  # -> llvmlite.ir.Function
    from llvmlite import ir

    found = module.globals.get(name)
    return found if found is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def _tile(module, dot, madd, rows: int):  # -> llvmlite.ir.Function
    """tile(a, inoff, nq, tapoff, b, bstride, shamt, out, outoff, ncount, fb0, fb1, tlo0,
    tlo1, thi0, thi1, r2 x 4, lo0, lo1, hi0, hi1) -> (lo0, lo1, hi0, hi1): ``rows`` windows
    by 32 channels (two blocks ``bstride`` bytes apart), summed over ``nq`` quads (quad q of
    a window at its address + tapoff[q]), requantized and stored (module doc); the
    per-channel terms and the running extremes come in registers and the extremes go back.
    The accumulators start from fb (s = sum + fb, wrapping as the add)."""
    from llvmlite import ir

    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    p8, p32 = i8.as_pointer(), i32.as_pointer()
    v16 = ir.VectorType(i32, 16)
    v8q = ir.VectorType(i64, 8)
    fnty = ir.FunctionType(ir.LiteralStructType([v16] * 4),
                           [p8, p32, i64, p32, p8, i64, i64, p8, p32, i64, *[v16] * 6,
                            *[v8q] * 4, *[v16] * 4])
    fn = ir.Function(module, fnty, f"tiled32_{rows}")
    fn.linkage = "internal"
    (a, inoff, nq, tapoff, b, bstride, shamt, out, outoff, ncount) = fn.args[:10]
    fb, tlo, thi = fn.args[10:12], fn.args[12:14], fn.args[14:16]
    r2 = (fn.args[16:18], fn.args[18:20])
    ext = fn.args[20:24]
    for ptr in (a, inoff, tapoff, b, out, outoff):
        ptr.add_attribute("noalias")

    def const(v: int, ty=i64) -> ir.Constant:
        return ir.Constant(ty, v)

    entry, g_loop, g_after, q_loop, q_after, plain, shifted = (fn.append_basic_block(n) for n in (
        "entry", "groups", "groups_after", "quads", "quads_after", "plain", "shifted"))
    bld = ir.IRBuilder(entry)
    row_ptrs = [bld.gep(a, [bld.sext(bld.load(bld.gep(inoff, [const(r)]), align=4), i64)])
                for r in range(rows)]
    b_blocks = [b, bld.gep(b, [bstride])]
    # each quad of the filter asks the next output slice's same quad into the cache: a
    # layer's weights come from memory (MobileNetV2's 7x7x320->1280: 410 KB), and the first
    # tile of a slice waited for them (that layer 93-95 -> 76-78 us in a run)
    next_slice = bld.mul(bstride, const(2))
    prefetch = _declare(module, "llvm.prefetch.p0i8", ir.VoidType(), [p8, i32, i32, i32])
    init = [list(fb) for _ in range(rows)]
    groups = bld.lshr(nq, const(2))
    rem = bld.and_(nq, const(3))

    def step(builder, accs, q):
        """Quad ``q`` of every row."""
        off = builder.sext(builder.load(builder.gep(tapoff, [q]), align=4), i64)
        b_at = builder.mul(q, const(4 * COLS))
        w = [builder.load(builder.bitcast(builder.gep(blk, [b_at]), v16.as_pointer()),
                          align=1) for blk in b_blocks]
        for blk in b_blocks:
            builder.call(prefetch, [builder.gep(blk, [builder.add(b_at, next_slice)]),
                                    ir.Constant(i32, 0), ir.Constant(i32, 2),
                                    ir.Constant(i32, 1)])
        new = []
        for acc, ptr in zip(accs, row_ptrs, strict=True):
            word = builder.load(builder.bitcast(builder.gep(ptr, [off]), p32), align=1)
            x = _splat(builder, word)
            # the data codes are the unsigned operand, the filter (w - zf) the signed one
            new.append([builder.call(dot, [acc[h], x, w[h]]) for h in range(2)])
        return new

    def loop(head, body, after, start_accs, count, per, base):
        """``count`` iterations of ``per`` quads from quad ``base`` (+ per x index); the
        builder left at ``after``, returning the accumulators there."""
        bld.cbranch(bld.icmp_signed(">", count, const(0)), body, after)
        bld.position_at_end(body)
        index = bld.phi(i64)
        accs = [[bld.phi(v16) for _ in range(2)] for _ in range(rows)]
        index.add_incoming(const(0), head)
        for acc, start in zip(accs, start_accs, strict=True):
            for h in range(2):
                acc[h].add_incoming(start[h], head)
        cur = accs
        first = bld.add(base, bld.mul(index, const(per)))
        for k in range(per):
            cur = step(bld, cur, bld.add(first, const(k)))
        index_next = bld.add(index, const(1))
        index.add_incoming(index_next, body)
        for acc, new in zip(accs, cur, strict=True):
            for h in range(2):
                acc[h].add_incoming(new[h], body)
        bld.cbranch(bld.icmp_signed("<", index_next, count), body, after)
        bld.position_at_end(after)
        merged = [[bld.phi(v16) for _ in range(2)] for _ in range(rows)]
        for acc, start, new in zip(merged, start_accs, cur, strict=True):
            for h in range(2):
                acc[h].add_incoming(start[h], head)
                acc[h].add_incoming(new[h], body)
        return merged

    merged = loop(entry, g_loop, g_after, init, groups, 4, const(0))
    final = loop(g_after, q_loop, q_after, merged, rem, 1, bld.mul(groups, const(4)))
    # a shift of 0 (most layers) takes an epilogue without the shift
    bld.cbranch(bld.icmp_signed("==", shamt, const(0)), plain, shifted)
    for block, shift in ((plain, False), (shifted, True)):
        bld.position_at_end(block)
        got = _requant(bld, madd, final, tlo, thi, r2, shamt if shift else None, ext, out,
                       outoff, ncount)
        bld.ret(bld.insert_value(bld.insert_value(bld.insert_value(bld.insert_value(
            ir.Constant(fnty.return_type, None), got[0], 0), got[1], 1), got[2], 2),
            got[3], 3))
    return fn


def _splat(bld, word):  # -> <16 x i32>
    from llvmlite import ir

    vec = ir.VectorType(ir.IntType(32), 16)
    one = bld.insert_element(ir.Constant(vec, None), word, ir.Constant(ir.IntType(32), 0))
    return bld.shuffle_vector(one, ir.Constant(vec, None), ir.Constant(vec, [0] * 16))


def _requant(bld, madd, accs, tlo, thi, r2, shamt, ext, out, outoff, ncount) -> list:
    """The tile's s (the sums plus fb) requantized (module doc) and stored, 16 codes a block,
    at out + outoff[row] (+ 16 for the second block); the rows below ``ncount`` taken into
    the extremes ``ext`` (lo0, lo1, hi0, hi1), which are returned. ``tlo``, ``thi``: a
    vector per block; ``r2``: two halves per block. ``shamt`` None: no shift."""
    from llvmlite import ir

    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    v16 = ir.VectorType(i32, 16)
    v8q = ir.VectorType(i64, 8)
    bytes64 = ir.VectorType(i8, 64)
    bytes16 = ir.VectorType(i8, 16)
    tlov, thiv, r2v = list(tlo), list(thi), r2
    lov, hiv = list(ext[:2]), list(ext[2:])
    sh = None if shamt is None else _splat(bld, bld.trunc(shamt, i32))
    half_code = ir.Constant(v8q, [1 << 31] * 8)
    # byte 4 of each 64-bit lane: lanes 0-7 from the first product, 8-15 from the second
    pick = ir.Constant(ir.VectorType(i32, 16), [8 * k + 4 for k in range(8)]
                       + [64 + 8 * k + 4 for k in range(8)])
    for r, row in enumerate(accs):
        counted = bld.icmp_signed(">", ncount, ir.Constant(i64, r))
        at = bld.gep(out, [bld.sext(bld.load(bld.gep(outoff, [ir.Constant(i64, r)]), align=4),
                                    i64)])
        for h, s in enumerate(row):
            t = s if sh is None else bld.shl(s, sh)
            low = bld.select(bld.icmp_signed("<", t, lov[h]), t, lov[h])
            high = bld.select(bld.icmp_signed(">", t, hiv[h]), t, hiv[h])
            lov[h] = bld.select(counted, low, lov[h])
            hiv[h] = bld.select(counted, high, hiv[h])
            tc = bld.select(bld.icmp_signed("<", t, tlov[h]), tlov[h], t)
            tc = bld.select(bld.icmp_signed(">", tc, thiv[h]), thiv[h], tc)
            products = []
            for half in range(2):
                part = bld.shuffle_vector(tc, ir.Constant(v16, None), ir.Constant(
                    ir.VectorType(i32, 8), list(range(8 * half, 8 * half + 8))))
                wide = bld.sext(part, v8q)
                products.append(bld.bitcast(bld.call(madd, [half_code, wide, r2v[h][half]]),
                                            bytes64))
            codes = bld.shuffle_vector(products[0], products[1], pick)
            assert codes.type == bytes16
            bld.store(codes, bld.bitcast(bld.gep(at, [ir.Constant(i64, 16 * h)]),
                                         bytes16.as_pointer()), align=1)
    return [*lov, *hiv]


__all__ = ["add_d32_kernel"]
