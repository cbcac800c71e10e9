"""benchmarks/sass_loops.py on SASS text written here in cuobjdump's layout: the loops it finds (a
branch back to an earlier address, the nested and the innermost), their sizes and counts by kind,
the MUFU operations by kind, the filter by function name and by size, and the errors it raises."""

import importlib.util
import os

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'benchmarks', 'sass_loops.py')

# Two functions as cuobjdump -sass prints them: pairs() with an inner loop (0x0020-0x0070: a shared
# load, a shuffle, a reciprocal and a power's LG2 and EX2, FP32 arithmetic, a compare and a select) in
# an outer one (0x0010-0x0090, with an atomic and a global load); other() with none.
SASS = """
	code for sm_90
		Function : pairs_0
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                       /* 0x00000a0000017a02 */
        /*0010*/                   LDG.E R2, desc[UR4][R4.64] ;                 /* 0x0000000404027981 */
        /*0020*/                   LDS.128 R8, [R3] ;                           /* 0x0000000003087984 */
        /*0030*/                   FFMA R10, R8, R8, R9 ;                       /* 0x0000000908087223 */
        /*0040*/                   MUFU.RCP R11, R10 ;                          /* 0x0000000a000b7308 */
        /*0050*/                   MUFU.LG2 R12, R10 ;                          /* 0x0000000a000c7308 */
        /*0060*/                   MUFU.EX2 R12, R12 ;                          /* 0x0000000c000c7308 */
        /*0065*/                   FSETP.GEU.AND P0, PT, R10, R7, PT ;          /* 0x000000070a00720b */
        /*0066*/                   FSEL R11, R11, RZ, !P0 ;                     /* 0x000000ff0b0b7208 */
        /*0067*/                   SHFL.IDX PT, R13, R11, R5, 0x1f ;            /* 0x00000005000d7389 */
        /*0068*/                   FADD R14, R14, R13 ;                         /* 0x0000000d0e0e7221 */
        /*0070*/              @P1 BRA 0x20 ;                                    /* 0xfffffffc00a81947 */
        /*0080*/                   RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R6.64], R14 ;  /* 0x0000000e0600798e */
        /*0090*/              @P2 BRA 0x10 ;                                    /* 0xfffffffc00a82947 */
        /*00a0*/                   EXIT ;                                       /* 0x000000000000794d */
        /*00b0*/                   BRA 0xb0;                                    /* 0xfffffffc00fc7947 */
		..........

		Function : other_0
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   DADD R2, R2, R4 ;                            /* 0x0000000402027229 */
        /*0010*/                   EXIT ;                                       /* 0x000000000000794d */
		..........
"""


@pytest.fixture(scope='module')
def sass_loops():
    spec = importlib.util.spec_from_file_location('sass_loops', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parse_and_loops(sass_loops):
    functions = sass_loops.parse(SASS)
    assert list(functions) == ['pairs_0', 'other_0']
    assert len(functions['pairs_0']) == 16 and functions['other_0'] == [(0, 'DADD R2, R2, R4'), (0x10, 'EXIT')]
    loops = sass_loops.loops(functions['pairs_0'], 400)
    # The branch to itself at 0xb0 (the end's trap), the inner loop, then the outer one.
    assert [(loop['first'], loop['last'], loop['size']) for loop in loops] == [(0xb0, 0xb0, 1), (0x20, 0x70, 10), (0x10, 0x90, 13)]
    inner, outer = loops[1], loops[2]
    assert {kind: inner[kind] for kind, _ in sass_loops.KINDS} == {'LDS': 1, 'SHFL': 1, 'MUFU': 3, 'FP32': 2, 'FP64': 0,
                                                                   'SETP': 1, 'SEL': 1, 'ATOM': 0, 'LDG': 0}
    assert inner['MUFU kinds'] == {'RCP': 1, 'LG2': 1, 'EX2': 1}
    assert (outer['ATOM'], outer['LDG'], outer['MUFU']) == (1, 1, 3)
    assert sass_loops.loops(functions['pairs_0'], 12) == loops[:2]
    assert sass_loops.loops(functions['other_0'], 400) == []


def test_main_filters_and_prints(sass_loops, tmp_path, capsys):
    path = tmp_path / 'module.sass'
    path.write_text(SASS)
    sass_loops.main([str(path), '--functions', 'pair', '--max', '12'])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'pairs_0: 16 instructions' and len(out) == 3 and 'other_0' not in '\n'.join(out)
    assert out[2] == ('  loop 00020-00070:  10 instructions  LDS 1 SHFL 1 MUFU 3 FP32 2 FP64 0 SETP 1 SEL 1 ATOM 0 LDG 0'
                      '  (MUFU: EX2 1, LG2 1, RCP 1)')


def test_main_errors(sass_loops, tmp_path):
    path = tmp_path / 'empty.sass'
    path.write_text('not a disassembly\n')
    with pytest.raises(ValueError, match='no "Function :" in .*empty.sass'):
        sass_loops.main([str(path)])
    with pytest.raises(ValueError, match='--max must be at least 1, got 0'):
        sass_loops.main([str(path), '--max', '0'])
