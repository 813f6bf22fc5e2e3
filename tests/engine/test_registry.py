"""Registry-wide rules: every seed op is declared once, with its hexagon_nn op id, ports, doc
and a kernel whose signature matches its ports (issue 2, issue 3; graph spec §2.14)."""

from __future__ import annotations

import inspect

import pytest

from hexscope.engine import REGISTRY, UnknownOpError
from hexscope.engine.ops.op_ids import OP_IDS

# The ops of the seed list (reference/004_750eca669d37ae60.txt) under the library's names.
SEED_OPS = """
INPUT OUTPUT Nop Const Check Close_f Close_quint8 Close_int32 Close_qint32 Close_q_quint8
Close_d32 PPrint_8 PPrint_8_d32 PPrintWithPadding_8_d32 PPrint_32 PPrint_f Flatten
Convert_from_d32 Convert_to_d32 QuantizedFlatten QuantizedConv2d_8x8to32
QuantizedMatMul_8x8to32 QuantizedBiasAdd_8p8to32 QuantizedRelu_8 QuantizedReluX_8
QuantizeDownAndShrinkRange_32to8 QuantizedMaxPool_8 QuantizedAvgPool_8 Concat_f ConcatV2_f
QuantizedConcat_8 QuantizedConcat_8_d32 QuantizedMul_8x8to8 QuantizedMul_8x8to8_d32
QuantizedAdd_8p8to8 QuantizedAdd_8p8to8_d32 QuantizedSub_8p8to8_d32 AutoQuantize
AutoQuantize_d32 Quantize Dequantize QuantizeForTest_d32 Min_f Max_f Softmax_f LRN_f Tanh_f
Sigmoid_f Gather_f Gather_int32 Gather_8 FillPadding_8_d32 Variable Assign
""".split()

# The seed's spellings that are not hexagon_nn's names (graph spec §6, quantized spec §0).
SEED_ALIASES = {
    "QuantizedAdd_8x8to8": "QuantizedAdd_8p8to8",
    "QuantizedAdd_8x8to8_d32": "QuantizedAdd_8p8to8_d32",
    "QuantizedSub_8x8to8_d32": "QuantizedSub_8p8to8_d32",
    "QuantizeForTestd32": "QuantizeForTest_d32",
}

BUILTIN = [s for s in REGISTRY.specs() if not s.user]


@pytest.mark.parametrize("name", SEED_OPS)
def test_seed_op_is_declared_and_simulated(name):
    spec = REGISTRY.get(name)
    assert spec.op_id == OP_IDS[name]
    assert spec.simulated, f"{name} has no kernel"


@pytest.mark.parametrize("alias, name", SEED_ALIASES.items())
def test_seed_spellings_resolve_to_library_names(alias, name):
    assert REGISTRY.canonical(alias) == name
    assert REGISTRY.get(alias) is REGISTRY.get(name)


@pytest.mark.parametrize("spec", BUILTIN, ids=lambda s: s.name)
def test_declaration_is_complete(spec):
    assert spec.summary and spec.summary != spec.name
    assert spec.category is not None
    assert spec.op_id == OP_IDS[spec.name]


@pytest.mark.parametrize("spec", [s for s in BUILTIN if s.kernel], ids=lambda s: s.name)
def test_kernel_signature_matches_ports(spec):
    params = list(inspect.signature(spec.kernel).parameters.values())[1:]   # after ctx
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    lo, hi = spec.inputs.arity
    if hi is None:
        assert variadic, f"{spec.name} takes a variable number of inputs"
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    assert variadic or len(positional) >= hi
    assert len(required) <= lo


def test_unknown_names_suggest_and_explain():
    with pytest.raises(UnknownOpError, match="did you mean QuantizedRelu_8"):
        REGISTRY.get("QuantizedRelu8")
    with pytest.raises(UnknownOpError, match="hexagon_nn op that Hexscope does not declare"):
        REGISTRY.get("QuantizedLRN_8_d32")


def test_palette_groups_cover_every_op():
    grouped = [s.name for specs in REGISTRY.by_category().values() for s in specs]
    assert sorted(grouped) == sorted(REGISTRY.names())
