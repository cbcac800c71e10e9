"""The loops of a CUDA module's SASS, counted by kind of instruction: what a pair costs, read without a GPU.

    python benchmarks/sass_loops.py module.sass --functions computeParticleHome,computeCoordinationCells

module.sass is `cuobjdump -sass module.cubin` of a module as the plugin assembles it:
TestCudaCoordinationCompile writes the source of each module it compiles where given a prefix
(`TestCudaCoordinationCompile /tmp/dump/p`), and `nvcc -cubin -arch=sm_90 --use_fast_math
"/tmp/dump/ptype 0-mixed.cu" -o module.cubin` compiles one for the H100 (add `-Xptxas -v` for
registers and spills). The CUDA toolkit of a machine may lack cuobjdump; PyPI has it:
`pip download --no-deps nvidia-cuda-cuobjdump`, then unzip the wheel (nvidia/cu13/bin/cuobjdump).

For each function (or those whose names contain one of --functions' words), each loop of at most
--max instructions (a branch back to an earlier address: unrolled pair loops are the small ones)
with its size and its counts: shared loads (LDS), shuffles (SHFL), special-function operations
(MUFU, by kind: each issues at an eighth of the FP32 rate on the H100), FP32 and FP64 arithmetic,
compares, selects, atomics and global loads. docs/cuda-implementation.md ("The distance power at
compile time") shows what it found: a run-time branch compiled into every pair.
"""

import argparse
import re
import sys

# Instruction kinds counted in a loop: (column, regular expression on the opcode and operands).
KINDS = [('LDS', r'\bLDS'), ('SHFL', r'\bSHFL'), ('MUFU', r'\bMUFU'), ('FP32', r'\bF(FMA|MUL|ADD)\b'),
         ('FP64', r'\bD(FMA|MUL|ADD)\b'), ('SETP', r'SETP'), ('SEL', r'\bF?SEL\b'), ('ATOM', r'\b(ATOMS?|RED)\b'),
         ('LDG', r'\bLDG')]
INSTRUCTION = re.compile(r'/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')
BRANCH = re.compile(r'\bBRA\b.*?(0x[0-9a-f]+)')


def parse(text):
    """{function name: [(address, instruction text)]} from cuobjdump -sass output."""
    functions = {}
    for part in re.split(r'\n\s*Function : ', '\n' + text)[1:]:
        name = part.split('\n', 1)[0].strip()
        functions[name] = [(int(m.group(1), 16), m.group(2)) for m in INSTRUCTION.finditer(part)]
    return functions


def loops(instructions, largest):
    """The loops of one function, innermost first by size: dicts of first and last address, size,
    the count of each of KINDS and the MUFU operations by kind (RCP, SQRT, EX2, ...)."""
    index = {address: i for i, (address, _) in enumerate(instructions)}
    found = []
    for i, (address, text) in enumerate(instructions):
        branch = BRANCH.search(text)
        if branch is None:
            continue
        target = int(branch.group(1), 16)
        if target > address or target not in index or i + 1 - index[target] > largest:
            continue
        body = [line for _, line in instructions[index[target]:i + 1]]
        loop = {'first': target, 'last': address, 'size': len(body)}
        for kind, pattern in KINDS:
            loop[kind] = sum(1 for line in body if re.search(pattern, line))
        mufu = {}
        for line in body:
            kind = re.search(r'\bMUFU\.(\w+)', line)
            if kind:
                mufu[kind.group(1)] = mufu.get(kind.group(1), 0) + 1
        loop['MUFU kinds'] = mufu
        found.append(loop)
    return sorted(found, key=lambda loop: loop['size'])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('sass', help='the output of cuobjdump -sass (- for standard input)')
    parser.add_argument('--functions', default='', help='comma-separated words; only the functions whose names hold one')
    parser.add_argument('--max', type=int, default=400, help='the largest loop reported, in instructions (default 400)')
    options = parser.parse_args(argv)
    if options.max < 1:
        raise ValueError('sass_loops.py: --max must be at least 1, got %d' % options.max)
    text = sys.stdin.read() if options.sass == '-' else open(options.sass).read()
    functions = parse(text)
    if not functions:
        raise ValueError('sass_loops.py: no "Function :" in %s; is it the output of cuobjdump -sass?' % options.sass)
    words = [word for word in options.functions.split(',') if word]
    for name, instructions in functions.items():
        if words and not any(word in name for word in words):
            continue
        print('%s: %d instructions' % (name, len(instructions)))
        for loop in loops(instructions, options.max):
            counts = ' '.join('%s %d' % (kind, loop[kind]) for kind, _ in KINDS)
            mufu = ', '.join('%s %d' % item for item in sorted(loop['MUFU kinds'].items()))
            print('  loop %05x-%05x: %3d instructions  %s%s' % (loop['first'], loop['last'], loop['size'], counts,
                                                            '  (MUFU: %s)' % mufu if mufu else ''))


if __name__ == '__main__':
    main()
